// Control-plane scale: 1,000 virtual nodes and 10,000 pods (100 Deployments × 100 replicas,
// each behind a Service), all in one process over the in-process API server. Measures the time
// until every pod is Running and Ready and listed as a ready endpoint in its Service's
// EndpointSlices (target: 60 s), and the memory used. Node agents share one pod and one node
// informer (as `kdp up` does with many virtual nodes).
// Run: node bin/run-ts.js bench/controlplane-scale.ts [nodes] [deployments] [replicas]

import { buildApiServer, ADMIN_USER } from '../src/apiserver/app.js';
import { buildInProcessClient } from '../src/client/in-process.js';
import { buildInformerFactory } from '../src/client/informer.js';
import type { EndpointSlice, Node, Pod } from '../src/api/types.js';
import { buildControllerManager } from '../src/controllers/manager.js';
import { buildNodeAgent, type NodeAgent } from '../src/kubelet/node-agent.js';
import { buildVirtualRuntime } from '../src/kubelet/runtime-virtual.js';
import { buildSharedSources } from '../src/kubelet/sources.js';
import { buildScheduler } from '../src/scheduler/scheduler.js';
import { buildMemoryStore } from '../src/store/index.js';

const NODES = Number(process.argv[2] ?? 1000);
const DEPLOYMENTS = Number(process.argv[3] ?? 100);
const REPLICAS = Number(process.argv[4] ?? 100);
const PODS = DEPLOYMENTS * REPLICAS;
const TARGET_S = 60;

const store = buildMemoryStore();
const api = buildApiServer({ store });
const client = buildInProcessClient(api.service, ADMIN_USER);
const informers = buildInformerFactory(client);
const mem0 = process.memoryUsage();
const t0 = performance.now();
const ms = () => Math.round(performance.now() - t0);
const marks: Record<string, number> = {};

const manager = buildControllerManager({ client, informers,
  options: { events: false, workers: 8, clusterCIDR: '10.0.0.0/8', nodeCIDRMaskSize: 24,
    endpointUpdatesBatchPeriodMs: 500 } });
const scheduler = buildScheduler({ client, informers, options: { seed: 7, events: false } });
await manager.start();
await scheduler.start();

const sources = buildSharedSources(
  informers.informerFor<Pod>({ group: '', version: 'v1', resource: 'pods' }),
  informers.informerFor<Node>({ group: '', version: 'v1', resource: 'nodes' }));
const agents: NodeAgent[] = [];
for (let i = 0; i < NODES; i += 50) {
  const batch = Array.from({ length: Math.min(50, NODES - i) }, (_, k) => buildNodeAgent({
    client, nodeName: `node-${i + k}`, runtime: buildVirtualRuntime(),
    options: { sources, nodeIP: `172.18.${(i + k + 2) >> 8}.${(i + k + 2) & 255}`, cpu: '32',
      memory: '128Gi' },
  }));
  await Promise.all(batch.map((a) => a.start()));
  agents.push(...batch);
}
marks.nodesRegistered = ms();

for (let d = 0; d < DEPLOYMENTS; d++) {
  const name = `app-${d}`;
  await client.create({ group: '', version: 'v1', resource: 'services', namespace: 'default' }, {
    apiVersion: 'v1', kind: 'Service', metadata: { name },
    spec: { selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
  });
  const deployments = { group: 'apps', version: 'v1', resource: 'deployments',
    namespace: 'default' };
  await client.create(deployments, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
    spec: { replicas: REPLICAS, selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web',
        image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }],
        resources: { requests: { cpu: '10m', memory: '16Mi' } } }] } } },
  });
}
marks.objectsCreated = ms();

const podInf = informers.informerFor<Pod>({ group: '', version: 'v1', resource: 'pods' });
const esInf = informers.informerFor<EndpointSlice>({ group: 'discovery.k8s.io', version: 'v1',
  resource: 'endpointslices' });
let running = 0;
let inSlices = 0;
let lastPrint = 0;
for (;;) {
  running = podInf.cache.list().filter((p) => p.status?.phase === 'Running'
    && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
  if (running === PODS && !marks.allRunning) marks.allRunning = ms();
  inSlices = esInf.cache.list().reduce((n, s) =>
    n + (s.endpoints ?? []).filter((e) => e.conditions?.ready).length, 0);
  if (running === PODS && inSlices === PODS) break;
  if (performance.now() - t0 > 300_000) break;
  if (process.env.KDP_BENCH_VERBOSE && ms() - lastPrint > 2000) {
    lastPrint = ms();
    const all = podInf.cache.list();
    console.error(ms(), 'pods', all.length, 'bound', all.filter((p) => p.spec?.nodeName).length,
      'withIP', all.filter((p) => p.status?.podIP).length, 'running', running,
      'inSlices', inSlices, JSON.stringify(scheduler.stats()));
  }
  await new Promise((r) => setTimeout(r, 200));
}
marks.allInSlices = ms();
const mem = process.memoryUsage();
const secs = marks.allInSlices / 1000;
console.log(JSON.stringify({
  bench: 'controlplane-scale', nodes: NODES, pods: PODS, running, readyEndpoints: inSlices,
  slices: esInf.cache.size(), marksMs: marks, seconds: Number(secs.toFixed(1)),
  targetSeconds: TARGET_S,
  ratioToTarget: Number((TARGET_S / secs).toFixed(2)),
  cpuSeconds: Number(((process.cpuUsage().user + process.cpuUsage().system) / 1e6).toFixed(1)),
  heapMB: Math.round(mem.heapUsed / 2 ** 20), rssMB: Math.round(mem.rss / 2 ** 20),
  heapGrowthMB: Math.round((mem.heapUsed - mem0.heapUsed) / 2 ** 20),
  podsInStore: ((await client.list({ group: '', version: 'v1', resource: 'pods' }, { limit: 1 }))
    .metadata.remainingItemCount ?? 0) + 1,
}));
for (const a of agents) await a.stop();
scheduler.stop();
await manager.stop();
informers.stop();
await api.close();
await store.close();
process.exit(0);
