// kube-proxy in a node namespace: the kernel's tables are read back and compared with what was
// compiled; a hand edit is reported (log, Node Event, drift status) and healed; a failed apply
// keeps the previous rules and is retried until it succeeds.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Event } from '../../src/api/types.js';
import type { KubeObject } from '../../src/client/types.js';
import type { HostExec } from '../../src/host/exec.js';
import { kdpError } from '../../src/errors.js';
import { buildKernelApplier } from '../../src/proxy/kernel-applier.js';
import { readDriftStatus, RuleHistory } from '../../src/proxy/history.js';
import { buildKubeProxy, type KubeProxy } from '../../src/proxy/proxy-server.js';
import { startApi, waitFor } from '../helpers/cluster.js';
import { startNetnsLab, type NetnsLab } from '../helpers/netns-lab.js';
import { canUseNetns } from '../helpers/root.js';

const EPS = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', namespace: 'default' } as const;
const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' } as const;
const EVENTS = { group: '', version: 'v1', resource: 'events', namespace: 'default' } as const;

function slice(ips: string[]): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true }, nodeName: 'n1' })),
  };
}

/** An exec whose rule applies (`nft -f`, `iptables-restore`) fail while `failing` is set. */
function flakyExec(inner: HostExec): HostExec & { failing: boolean } {
  const e = {
    failing: false,
    run(file: string, args: readonly string[], opts?: Parameters<HostExec['run']>[2]) {
      const applies = (file === 'nft' && args.includes('-f')) || file.endsWith('-restore');
      if (e.failing && applies) return Promise.reject(kdpError('KDP_HOST_EXEC', `${file}: injected failure`));
      return inner.run(file, args, opts);
    },
  };
  return e;
}

for (const mode of ['nftables', 'iptables'] as const) {
  describe.runIf(canUseNetns(['ip', 'nft', 'iptables-restore']))(`kube-proxy rule drift (${mode})`, () => {
    let lab: NetnsLab;
    let api: Awaited<ReturnType<typeof startApi>>;
    let proxy: KubeProxy;
    let exec: ReturnType<typeof flakyExec>;
    const logs: string[] = [];
    const errors: string[] = [];
    const historyDir = join(mkdtempSync(join(tmpdir(), 'kdp-drift-')), 'rules');
    const ns = () => lab.topo.nodeNetns('n1');
    const kernel = async () => mode === 'nftables'
      ? (await lab.exec.run('nft', ['list', 'table', 'ip', 'kube-proxy'], { netns: ns() })).stdout
      : (await lab.exec.run('iptables-save', ['-t', 'nat'], { netns: ns() })).stdout;

    beforeAll(async () => {
      lab = await startNetnsLab(1);
      api = await startApi();
      exec = flakyExec(lab.exec);
      await api.client.create(SVC, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' },
        spec: { clusterIP: '10.96.0.70', ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
      await api.client.create(EPS, slice(['10.244.0.10']));
      proxy = await buildKubeProxy({
        client: api.client, nodeName: 'n1', nodeIPs: ['172.18.0.2'], mode,
        applier: buildKernelApplier(exec, ns(), mode), history: new RuleHistory(historyDir),
        timeScale: 0.05, driftCheckMs: 100, log: (l) => logs.push(l), onError: (e) => errors.push(String(e)),
      });
      await proxy.start();
      await proxy.synced();
    }, 60_000);

    afterAll(async () => {
      proxy?.stop();
      await api?.close();
      await lab?.close();
    }, 30_000);

    it('the kernel read back matches what was compiled', async () => {
      await proxy.synced();
      expect(proxy.driftStatus()).toEqual([expect.objectContaining({ family: 'IPv4', inSync: true })]);
      expect(logs).toEqual([]);
      expect(await kernel()).toContain('10.244.0.10');
    });

    it('a rule changed by hand is reported as drift (log, Node Event, drift.json) and healed', async () => {
      if (mode === 'nftables') {
        const chain = /chain (endpoint-\S+)/.exec(await kernel())![1]!;
        await lab.exec.run('nft', ['flush', 'chain', 'ip', 'kube-proxy', chain], { netns: ns() });
      } else {
        const chain = /^:(KUBE-SEP-\S+)/m.exec(await kernel())![1]!;
        await lab.exec.run('iptables', ['-t', 'nat', '-F', chain], { netns: ns() });
      }
      await waitFor(() => logs.some((l) => l.includes('differ from the compiled')), 20_000, 'drift reported');
      const ev = await waitFor(async () => (await api.client.list<Event>(EVENTS)).items
        .find((e) => e.reason === 'KubeProxyRuleDrift'), 20_000, 'a KubeProxyRuleDrift event');
      expect(ev).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Node', name: 'n1' } });
      await waitFor(() => proxy.driftStatus()[0]?.inSync && proxy.driftStatus()[0]?.healedAt, 20_000, 'healed');
      const onDisk = readDriftStatus(historyDir)[0]!;
      expect(onDisk).toMatchObject({ inSync: true, drifts: 1, lastDrift: { count: expect.any(Number) } });
      expect(onDisk.lastDrift!.differences.join('\n')).toMatch(mode === 'nftables' ? /endpoint-/ : /KUBE-SEP-/);
      expect(await kernel()).toContain('10.244.0.10:8080');
      expect(logs.filter((l) => l.includes('still there'))).toEqual([]);
      expect(logs.at(-1)).toContain('back in sync');
    }, 60_000);

    it('a failed apply keeps the previous rules and is retried until it succeeds', async () => {
      exec.failing = true;
      const cur = await api.client.get<KubeObject>(EPS, 'web-1');
      await api.client.update(EPS, { ...cur, ...slice(['10.244.0.10', '10.244.0.11']) });
      await waitFor(() => errors.some((e) => e.includes('injected failure')), 20_000, 'a failed apply');
      const during = await kernel();
      expect(during).toContain('10.244.0.10');
      expect(during).not.toContain('10.244.0.11');
      exec.failing = false;
      await waitFor(async () => (await kernel()).includes('10.244.0.11'), 20_000,
        `the retried apply (errors: ${errors.slice(-3).join(' / ')}; logs: ${logs.slice(-3).join(' / ')})`);
      expect(await kernel()).toContain('10.244.0.10');
    }, 60_000);
  });
}
