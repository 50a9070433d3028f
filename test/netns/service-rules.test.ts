import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/client/types.js';
import { isKdpError } from '../../src/errors.js';
import { assertKernelMode, buildKernelApplier } from '../../src/proxy/kernel-applier.js';
import { podNetnsName } from '../../src/kubelet/runtime-netns.js';
import { RuleHistory } from '../../src/proxy/history.js';
import { buildKubeProxy, type KubeProxy } from '../../src/proxy/proxy-server.js';
import { startApi } from '../helpers/cluster.js';
import { echoPod, runReady, startNetnsLab, type NetnsLab } from '../helpers/netns-lab.js';
import { probe, seenPod } from '../helpers/netns-probe.js';
import { canUseNetns } from '../helpers/root.js';

const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' } as const;
const EPS = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', namespace: 'default' } as const;
const CLUSTER_IP = '10.96.0.50';

function slice(backends: Array<{ ip: string; node: string }>): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: backends.map((b) => ({ addresses: [b.ip], conditions: { ready: true }, nodeName: b.node })),
  };
}

it('netns mode refuses ipvs with a configuration error', () => {
  let err: unknown;
  try { assertKernelMode('ipvs'); } catch (e) { err = e; }
  expect(isKdpError(err, 'KDP_CONFIG')).toBe(true);
  expect(() => assertKernelMode('nftables')).not.toThrow();
});

describe.runIf(canUseNetns(['ip', 'iptables-restore', 'iptables-save', 'nft', 'nsenter']))(
  'kube-proxy rules applied in node namespaces', () => {
    let lab: NetnsLab;
    let api: Awaited<ReturnType<typeof startApi>>;
    const proxies: KubeProxy[] = [];
    const backends = [echoPod('web-a', [{ containerPort: 8080 }]), echoPod('web-b', [{ containerPort: 8080 }])];
    // One client per node: n1 runs kube-proxy in iptables mode, n2 in nftables mode.
    const clients = [echoPod('client-1', []), echoPod('client-2', [])];
    const ips: string[] = [];
    const byMode = { iptables: 0, nftables: 1 } as const;

    beforeAll(async () => {
      lab = await startNetnsLab(2);
      for (let i = 0; i < 2; i++) {
        ips.push((await runReady(lab.nodes[i]!, backends[i]!)).podIPs[0]!);
        await runReady(lab.nodes[i]!, clients[i]!);
      }
      api = await startApi();
      await api.client.create(SVC, {
        apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' },
        spec: { clusterIP: CLUSTER_IP, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
      });
      await api.client.create(EPS, slice([{ ip: ips[0]!, node: 'n1' }, { ip: ips[1]!, node: 'n2' }]));
      for (const mode of ['iptables', 'nftables'] as const) {
        const node = lab.nodes[byMode[mode]]!;
        const proxy = await buildKubeProxy({
          client: api.client, nodeName: node.name, nodeIPs: [node.ip], mode, timeScale: 0.05,
          applier: buildKernelApplier(lab.exec, lab.topo.nodeNetns(node.name), mode),
          history: new RuleHistory(join(mkdtempSync(join(tmpdir(), 'kdp-rules-')), 'rules')),
        });
        await proxy.start();
        proxies.push(proxy);
        await proxy.synced();
      }
    }, 90_000);

    afterAll(async () => {
      for (const p of proxies) p.stop();
      await api?.close();
      await lab?.close();
    }, 30_000);

    const ask = (mode: keyof typeof byMode) =>
      probe(lab.exec, podNetnsName(lab.topo.prefix, clients[byMode[mode]]!.metadata.uid!), 'tcp', CLUSTER_IP, 80);

    it.each(['iptables', 'nftables'] as const)('%s: pod to ClusterIP reaches a ready backend', async (mode) => {
      for (let i = 0; i < 4; i++) expect(['web-a', 'web-b']).toContain(seenPod(await ask(mode)));
    });

    it('iptables: the built-in chains jump to kube-proxy chains exactly once', async () => {
      await proxies[0]!.synced();
      const saved = (await lab.exec.run('iptables-save', ['-t', 'nat'], { netns: lab.topo.nodeNetns('n1') })).stdout;
      expect(saved.match(/-A PREROUTING .*-j KUBE-SERVICES/g)).toHaveLength(1);
      expect(saved).toContain(`-d ${CLUSTER_IP}/32`);
    });

    it('removing a backend changes the kernel rules and the traffic follows', async () => {
      await api.client.update(EPS, { ...(await api.client.get(EPS, 'web-1')), ...slice([{ ip: ips[1]!, node: 'n2' }]) });
      for (const p of proxies) await p.synced();
      const saved = (await lab.exec.run('iptables-save', [], { netns: lab.topo.nodeNetns('n1') })).stdout;
      const nft = (await lab.exec.run('nft', ['list', 'table', 'ip', 'kube-proxy'], { netns: lab.topo.nodeNetns('n2') })).stdout;
      expect(saved).not.toContain(`${ips[0]}/32`);
      expect(nft).not.toContain(`${ips[0]} `);
      expect(nft).toContain(ips[1]);
      for (const mode of ['iptables', 'nftables'] as const) {
        for (let i = 0; i < 3; i++) expect(seenPod(await ask(mode))).toBe('web-b');
      }
    });
  });
