import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildMemoryApplier, type RuleApplier } from '../../src/proxy/applier.js';
import { listSnapshots, readSnapshot, RuleHistory } from '../../src/proxy/history.js';
import { buildKubeProxy, type KubeProxy } from '../../src/proxy/proxy-server.js';
import { traceOffline } from '../../src/trace/offline.js';
import { startApi, waitFor } from '../helpers/cluster.js';
import type { KubeObject } from '../../src/client/types.js';

const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' } as const;
const EPS = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', namespace: 'default' } as const;

function slice(ips: string[]): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true }, nodeName: 'n1' })),
  };
}

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function setup(mode: 'iptables' | 'nftables' | 'ipvs', applier: RuleApplier = buildMemoryApplier(mode)) {
  const api = await startApi();
  cleanup.push(() => api.close());
  await api.client.create(SVC, {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' },
    spec: { clusterIP: '10.96.0.50', ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
  });
  await api.client.create(EPS, slice(['10.244.0.5']));
  const dir = join(mkdtempSync(join(tmpdir(), 'kdp-proxy-')), 'rules');
  const proxy: KubeProxy = await buildKubeProxy({
    client: api.client, nodeName: 'n1', nodeIPs: ['172.18.0.2'], applier, mode,
    history: new RuleHistory(dir), timeScale: 0.01,
  });
  await proxy.start();
  cleanup.push(() => proxy.stop());
  await proxy.synced();
  return { api, proxy, dir, applier };
}

function destinations(text: string, mode: 'iptables' | 'nftables' | 'ipvs'): string[] {
  const r = traceOffline({ rules: text, mode, nodeIPs: ['172.18.0.2'], src: '10.244.0.9', dst: '10.96.0.50', dport: 80, proto: 'tcp' });
  return r.destinations.map((d) => d.destination).sort();
}

describe('kube-proxy against the API server (virtual mode)', () => {
  it.each(['iptables', 'nftables', 'ipvs'] as const)('%s: programs a Service, follows a scale-up, keeps history', async (mode) => {
    const { api, proxy, dir } = await setup(mode);
    const first = readSnapshot(dir, '@latest');
    expect(first.full).toBe(true);
    expect(destinations(first.text, mode)).toEqual(['10.244.0.5:8080']);
    await api.client.update(EPS, { ...(await api.client.get(EPS, 'web-1')), ...slice(['10.244.0.5', '10.244.1.6']) });
    await proxy.synced();
    const after = readSnapshot(dir, '@latest');
    expect(after.seq).toBeGreaterThan(first.seq);
    expect(destinations(after.text, mode)).toEqual(['10.244.0.5:8080', '10.244.1.6:8080']);
    expect(listSnapshots(dir).length).toBeGreaterThanOrEqual(2);
  });

  it('a failed apply keeps the previous rules and is retried', async () => {
    const inner = buildMemoryApplier('iptables');
    let fail = false;
    let refused = 0;
    const flaky: RuleApplier = {
      mode: 'iptables',
      apply: async (f, r) => {
        if (fail) { refused++; throw new Error('kernel said no'); }
        return inner.apply(f, r);
      },
      dump: (f) => inner.dump(f),
    };
    const { api, proxy } = await setup('iptables', flaky);
    const before = await inner.dump('IPv4');
    fail = true;
    await api.client.delete(EPS, 'web-1');
    // The sync that would drop the endpoint was tried (and refused) twice: the rules stayed.
    await waitFor(async () => refused >= 2 || undefined, 5_000, 'two refused applies');
    expect(await inner.dump('IPv4')).toBe(before);
    fail = false;
    await proxy.synced();
    expect(destinations(await inner.dump('IPv4'), 'iptables')).not.toContain('10.244.0.5:8080');
  });

  it('a stopped kube-proxy stops every loop: no apply or retry after stop, whatever the informers see', async () => {
    const inner = buildMemoryApplier('iptables');
    let applies = 0;
    let fail = false;
    const counting: RuleApplier = {
      mode: 'iptables',
      apply: async (f, r) => { applies++; if (fail) throw new Error('nft: No such file or directory'); return inner.apply(f, r); },
      dump: (f) => inner.dump(f),
    };
    const { api, proxy } = await setup('iptables', counting);
    fail = true;
    const started = applies;
    await api.client.delete(EPS, 'web-1');
    // Failing, and retrying (10 ms back-off at this scale): the loop was running when stopped.
    await waitFor(async () => applies >= started + 2 || undefined, 5_000, 'retries under way');
    proxy.stop();
    await new Promise((r) => setTimeout(r, 20));
    const atStop = applies;
    await api.client.create(EPS, slice(['10.244.0.7']));
    await new Promise((r) => setTimeout(r, 300));
    expect(applies).toBe(atStop);
  });
});

