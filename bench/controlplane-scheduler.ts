// Scheduler throughput: 1,000 nodes (objects only), 5,000 pending pods created up front; the
// scheduler starts and binds them all through the in-process API server. Target ≥ 1,000 pods/s.
// Run: node bin/run-ts.js bench/controlplane-scheduler.ts [nodes] [pods]

import { buildApiServer, ADMIN_USER } from '../src/apiserver/app.js';
import { buildInProcessClient } from '../src/client/in-process.js';
import { buildScheduler } from '../src/scheduler/scheduler.js';
import { buildMemoryStore } from '../src/store/index.js';

const NODES = Number(process.argv[2] ?? 1000);
const PODS = Number(process.argv[3] ?? 5000);
const TARGET = 1000;

const store = buildMemoryStore();
const api = buildApiServer({ store });
const client = buildInProcessClient(api.service, ADMIN_USER);

async function inBatches(n: number, batch: number, fn: (i: number) => Promise<unknown>) {
  for (let i = 0; i < n; i += batch) {
    await Promise.all(Array.from({ length: Math.min(batch, n - i) }, (_, k) => fn(i + k)));
  }
}

await inBatches(NODES, 100, (i) => client.create({ group: '', version: 'v1', resource: 'nodes' }, {
  apiVersion: 'v1', kind: 'Node',
  metadata: { name: `node-${i}`, labels: { 'kubernetes.io/hostname': `node-${i}` } },
  status: { capacity: { cpu: '32', memory: '128Gi', pods: '110' },
    allocatable: { cpu: '32', memory: '128Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True' }] },
}));
await inBatches(PODS, 200, (i) => client.create({ group: '', version: 'v1', resource: 'pods',
  namespace: 'default' }, {
  apiVersion: 'v1', kind: 'Pod', metadata: { name: `pod-${i}`, labels: { app: `a${i % 50}` } },
  spec: { containers: [{ name: 'c', image: 'x',
    resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
}));

const scheduler = buildScheduler({ client, options: { seed: 42, events: false } });
const t0 = performance.now();
await scheduler.start();
const tSynced = performance.now();
while (scheduler.stats().scheduled < PODS) {
  await new Promise((r) => setTimeout(r, 5));
  if (performance.now() - t0 > 120_000) break;
}
const t1 = performance.now();
const st = scheduler.stats();
const secs = (t1 - tSynced) / 1000;
const rate = st.scheduled / secs;
const mem = process.memoryUsage();
console.log(JSON.stringify({
  bench: 'controlplane-scheduler', nodes: NODES, pods: PODS, scheduled: st.scheduled,
  bindErrors: st.bindErrors, informerSyncMs: Math.round(tSynced - t0),
  scheduleSeconds: Number(secs.toFixed(2)), podsPerSecond: Math.round(rate),
  target: TARGET, ratioToTarget: Number((rate / TARGET).toFixed(2)),
  heapMB: Math.round(mem.heapUsed / 2 ** 20), rssMB: Math.round(mem.rss / 2 ** 20),
}));
scheduler.stop();
await api.close();
await store.close();
