// kube-proxy and the pod network as kube-system DaemonSets in netns mode: each node's kube-proxy
// runs because its pod runs and serves /healthz on 10256 in the node's namespace; the kdp-cni
// pods keep the cross-node routes. Deleting either pod keeps running pods' traffic (rules and
// routes stay) and its replacement takes over; a ConfigMap edit + DaemonSet restart switches
// the kernel from iptables to nftables, the iptables rules cleaned as upstream's kube-proxy does.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { listSnapshots, readSnapshot, rulesDir } from '../../src/proxy/history.js';
import { waitFor } from '../helpers/cluster.js';
import { probe, seenPod } from '../helpers/netns-probe.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const ref = (resource: string, namespace?: string, group = '', version = 'v1') =>
  ({ group, version, resource, ...(namespace ? { namespace } : {}) });
const PODS = ref('pods', 'default');
const SYS_PODS = ref('pods', 'kube-system');
const ready = (p: Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

function webPod(name: string, node: string): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: 'web' } },
    spec: { nodeName: node, containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] } } as Pod;
}

describe.runIf(canUseNetns(['ip', 'iptables-restore', 'iptables-save', 'nft', 'nsenter']))('system DaemonSets in netns mode', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-spn-')));
  const prefix = hostPrefixFor(paths);
  let cluster: RunningCluster | undefined;
  const client = () => cluster!.client;
  const sysPod = async (app: string, node: string) => (await client().list<Pod>(SYS_PODS)).items
    .find((p) => p.metadata.name!.startsWith(`${app}-`) && p.spec?.nodeName === node && !p.metadata.deletionTimestamp);
  const answers = async (from: string, host: string, port: number) =>
    seenPod(await probe(exec, `${prefix}-${from}`, 'tcp', host, port).catch(() => '')) ?? '';
  const healthz = async (node: string) => (await exec.run(process.execPath, ['-e', `
      require('node:http').get('http://127.0.0.1:10256/healthz', (r) => {
        let b = ''; r.on('data', (d) => b += d); r.on('end', () => process.stdout.write(r.statusCode + ' ' + b));
      }).on('error', (e) => { process.stdout.write('error ' + e.message); });`], { netns: `${prefix}-${node}`, timeoutMs: 10_000 })).stdout;

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'iptables', timeScale: 5, dataPlane: 'netns',
      systemPods: true, dns: false, progress: () => {} });
    await client().create(PODS, webPod('web-1', 'n1'));
    await client().create(PODS, webPod('web-2', 'n2'));
    await client().create(ref('services', 'default'), { apiVersion: 'v1', kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: { clusterIP: '10.96.0.80', selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } });
    await waitFor(async () => (await client().list<Pod>(PODS)).items.every(ready), 30_000, 'web pods Ready');
  }, 90_000);

  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, prefix);
  }, 60_000);

  it('each node runs a Ready kube-proxy pod (its /healthz on 10256 answers 200) and a Ready kdp-cni pod', async () => {
    for (const node of ['n1', 'n2']) {
      for (const app of ['kube-proxy', 'kdp-cni']) {
        const p = await sysPod(app, node);
        expect(p && ready(p)).toBe(true);
        expect(p!.status?.podIP).toBe(node === 'n1' ? '172.18.0.2' : '172.18.0.3');
      }
      const h = await healthz(node);
      expect(h).toMatch(/^200 \{"lastUpdated": "20/);
      expect(h).toContain('"nodeEligible": true');
    }
  });

  it('the ClusterIP answers, and n1 reaches web-2 on n2 over the route kdp-cni made', async () => {
    const web2 = await client().get<Pod>(PODS, 'web-2');
    expect(await waitFor(async () => (await answers('n1', web2.status!.podIP!, 8080)) === 'web-2' || undefined,
      20_000, 'web-2 from n1')).toBe(true);
    expect(['web-1', 'web-2']).toContain(await waitFor(async () => (await answers('n1', '10.96.0.80', 80)) || undefined,
      20_000, 'the ClusterIP from n1'));
  });

  it('deleting n1\'s kube-proxy pod keeps the Service answering; the new pod\'s kube-proxy re-syncs n1', async () => {
    const old = (await sysPod('kube-proxy', 'n1'))!;
    const before = Math.max(...listSnapshots(rulesDir(paths.root, 'n1')).map((s) => s.seq));
    await client().delete(SYS_PODS, old.metadata.name!);
    // The old pod is gone (its kube-proxy stopped) — the rules it left still carry the Service.
    await waitFor(async () => (await client().list<Pod>(SYS_PODS)).items.every((p) => p.metadata.uid !== old.metadata.uid) || undefined,
      20_000, 'the old kube-proxy pod gone');
    expect(['web-1', 'web-2']).toContain(await answers('n1', '10.96.0.80', 80));
    const fresh = await waitFor(async () => { const p = await sysPod('kube-proxy', 'n1'); return p && ready(p) ? p : undefined; },
      30_000, 'a new Ready kube-proxy pod on n1');
    expect(fresh.metadata.uid).not.toBe(old.metadata.uid);
    expect(listSnapshots(rulesDir(paths.root, 'n1')).some((s) => s.seq > before && s.full)).toBe(true);
    // A Service made now is programmed by the new kube-proxy.
    await client().create(ref('services', 'default'), { apiVersion: 'v1', kind: 'Service',
      metadata: { name: 'web2', namespace: 'default' },
      spec: { clusterIP: '10.96.0.81', selector: { app: 'web' }, ports: [{ port: 81, targetPort: 8080 }] } });
    expect(['web-1', 'web-2']).toContain(await waitFor(async () => (await answers('n1', '10.96.0.81', 81)) || undefined,
      20_000, 'the new Service from n1'));
  });

  it('deleting n1\'s kdp-cni pod keeps cross-node traffic; a new one takes over', async () => {
    const old = (await sysPod('kdp-cni', 'n1'))!;
    await client().delete(SYS_PODS, old.metadata.name!);
    const web2 = await client().get<Pod>(PODS, 'web-2');
    expect(await answers('n1', web2.status!.podIP!, 8080)).toBe('web-2');
    await waitFor(async () => { const p = await sysPod('kdp-cni', 'n1'); return p && ready(p) && p.metadata.uid !== old.metadata.uid; },
      30_000, 'a new Ready kdp-cni pod on n1');
    expect(await answers('n1', web2.status!.podIP!, 8080)).toBe('web-2');
  });

  it('mode: nftables in the ConfigMap and a DaemonSet restart switch each node\'s kernel to nftables, iptables rules cleaned', async () => {
    const cm = await client().get<Pod & { data: Record<string, string> }>(ref('configmaps', 'kube-system'), 'kube-proxy');
    cm.data['config.conf'] = cm.data['config.conf']!.replace(/^mode: iptables$/m, 'mode: nftables');
    await client().update(ref('configmaps', 'kube-system'), cm);
    await client().patch(ref('daemonsets', 'kube-system', 'apps'), 'kube-proxy', 'merge',
      { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } } } } });
    for (const node of ['n1', 'n2']) {
      await waitFor(() => readSnapshot(rulesDir(paths.root, node), '@latest', 'IPv4').mode === 'nftables' || undefined,
        60_000, `${node} in nftables mode`);
      const nft = (await exec.run('nft', ['list', 'table', 'ip', 'kube-proxy'], { netns: `${prefix}-${node}` })).stdout;
      expect(nft).toContain('10.96.0.80');
      const nat = (await exec.run('iptables-save', ['-t', 'nat'], { netns: `${prefix}-${node}` })).stdout;
      expect(nat).not.toMatch(/KUBE-SERVICES|KUBE-SVC-/);
    }
    expect(['web-1', 'web-2']).toContain(await waitFor(async () => (await answers('n2', '10.96.0.80', 80)) || undefined,
      20_000, 'the ClusterIP from n2 in nftables mode'));
  }, 120_000);
});
