// NetworkPolicy programming latency (root), side by side with kube-proxy's Service programming on
// the same nodes: 3 node namespaces, each with the policy controller (kernel applier: `nft -f`
// in the node namespace, tools run by the exec helper as in `kdp up`) and kube-proxy (nftables).
// 50 pods (API objects with IPs, spread over the nodes), 20 policies; 20 policy changes (one
// policy's port changed), each timed from the API update to the moment the last node's
// controller returned from the apply that carries it; then 20 Service changes (a new port),
// timed to the last node's kube-proxy apply after the change. Changes 1.1 s apart (beyond
// kube-proxy's minSyncPeriod). Issue 18 target: policy change → applied p99 ≤ 1 s. Wall time.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildInformerFactory } from '../src/client/informer.js';
import type { KubeObject } from '../src/client/types.js';
import { buildHelperHostExec } from '../src/host/exec-helper.js';
import { buildKernelApplier } from '../src/proxy/kernel-applier.js';
import { buildKernelNetpolApplier } from '../src/netpol/applier.js';
import { buildNetpolController } from '../src/netpol/controller.js';
import { RuleHistory } from '../src/proxy/history.js';
import { buildKubeProxy, type SyncTiming } from '../src/proxy/proxy-server.js';
import { startApi } from '../test/helpers/cluster.js';
import { startNetnsLab } from '../test/helpers/netns-lab.js';
import { percentile, report } from './lib-bench.js';

if (process.getuid?.() !== 0) {
  console.log('netpol-apply-latency: needs root (network namespaces); skipped');
  process.exit(0);
}

const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const NP = { group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies', namespace: 'default' } as const;
const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' } as const;
const EPS = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', namespace: 'default' } as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const policy = (k: number, port: number): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: `p-${k}`, namespace: 'default' },
  spec: { podSelector: { matchLabels: { grp: `g${k % 5}` } },
    ingress: [{ from: [{ podSelector: { matchLabels: { role: `r${k % 3}` } } }], ports: [{ port }] }] },
});

const exec = buildHelperHostExec();
const lab = await startNetnsLab(3);
const api = await startApi();
const informers = buildInformerFactory(api.client);
try {
  for (let i = 0; i < 50; i++) {
    const name = `pod-${i}`;
    await api.client.create(PODS, { apiVersion: 'v1', kind: 'Pod',
      metadata: { name, namespace: 'default', labels: { grp: `g${i % 5}`, role: `r${i % 3}` } },
      spec: { nodeName: lab.nodes[i % 3]!.name, containers: [{ name: 'c', image: 'kdp/echo' }] } });
    const ip = `10.244.${i % 3}.${10 + i}`;
    await api.client.patch(PODS, name, 'merge', { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] } },
      { subresource: 'status' });
  }
  for (let k = 0; k < 20; k++) await api.client.create(NP, policy(k, 80));
  await api.client.create(SVC, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' },
    spec: { clusterIP: '10.96.0.71', ports: [{ name: 'p0', port: 80, targetPort: 8080 }] } });
  await api.client.create(EPS, { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4', ports: [{ name: 'p0', port: 8080, protocol: 'TCP' }],
    endpoints: [{ addresses: ['10.244.0.10'], conditions: { ready: true }, nodeName: 'n1' }] });
  informers.start();

  const applied = new Map<string, Array<{ at: number; text: string }>>();
  const syncs = new Map<string, SyncTiming[]>();
  const stops: Array<() => void> = [];
  for (const node of lab.nodes) {
    applied.set(node.name, []);
    syncs.set(node.name, []);
    const ctl = buildNetpolController({ nodeName: node.name, nodeIPs: [node.ip], informers,
      applier: buildKernelNetpolApplier(exec, lab.topo.nodeNetns(node.name)),
      onApplied: (text) => applied.get(node.name)!.push({ at: performance.now(), text }),
      onError: (e) => console.error(`netpol ${node.name}: ${(e as Error).message}`) });
    await ctl.start();
    const proxy = await buildKubeProxy({ client: api.client, nodeName: node.name, nodeIPs: [node.ip], mode: 'nftables',
      applier: buildKernelApplier(exec, lab.topo.nodeNetns(node.name), 'nftables'), informers,
      history: new RuleHistory(join(mkdtempSync(join(tmpdir(), 'kdp-nplat-')), 'rules')),
      onSyncTiming: (t) => syncs.get(node.name)!.push(t) });
    await proxy.start();
    await proxy.synced();
    stops.push(() => { ctl.stop(); proxy.stop(); });
  }
  const size = Buffer.byteLength(applied.get('n1')!.at(-1)?.text ?? '');

  const policyMs: number[] = [];
  for (let r = 1; r <= 20; r++) {
    await sleep(1100);
    const k = r % 20;
    const port = 1000 + r;
    const cur = await api.client.get(NP, `p-${k}`);
    const t0 = performance.now();
    await api.client.update(NP, { ...policy(k, port), metadata: cur.metadata });
    const marker = `th dport ${port} return comment "default/p-${k} ingress rule 0"`;
    const at = await Promise.all(lab.nodes.map(async (n) => {
      for (;;) {
        const hit = applied.get(n.name)!.find((a) => a.at >= t0 && a.text.includes(marker));
        if (hit) return hit.at;
        await sleep(2);
      }
    }));
    policyMs.push(Math.max(...at) - t0);
  }
  const serviceMs: number[] = [];
  for (let r = 1; r <= 20; r++) {
    await sleep(1100);
    const cur = await api.client.get<KubeObject & { spec: { ports: unknown[] } }>(SVC, 'web');
    const t0 = performance.now();
    await api.client.update(SVC, { ...cur, spec: { ...cur.spec,
      ports: [...cur.spec.ports, { name: `p${r}`, port: 1000 + r, targetPort: 8080 }] } });
    const at = await Promise.all(lab.nodes.map(async (n) => {
      for (;;) {
        const t = syncs.get(n.name)!.find((x) => x.start >= t0);
        if (t) return t.applied;
        await sleep(2);
      }
    }));
    serviceMs.push(Math.max(...at) - t0);
  }
  for (const s of stops) s();
  policyMs.sort((a, b) => a - b);
  serviceMs.sort((a, b) => a - b);
  console.log(`50 pods, 20 policies, 3 nodes; a node's table ≈ ${(size / 1024).toFixed(1)} KB`);
  report('policy change → applied in all 3 nodes\' kernels, p50', percentile(policyMs, 50), 'ms');
  report('policy change → applied in all 3 nodes\' kernels, p99', percentile(policyMs, 99), 'ms', { op: '<=', value: 1000 });
  report('Service change → kube-proxy applied in all 3 nodes, p50', percentile(serviceMs, 50), 'ms');
  report('Service change → kube-proxy applied in all 3 nodes, p99', percentile(serviceMs, 99), 'ms');
} finally {
  informers.stop();
  await api.close();
  await lab.close();
}
