// StatefulSet of N ordered pods beside a Deployment of N replicas (and a Parallel StatefulSet),
// on virtual nodes in one process over the in-process API server: time from create until every
// pod is Running and Ready. OrderedReady creates one pod per predecessor's readiness, so its time
// is N round trips (create → schedule → kubelet Running+Ready → controller sees it); the
// Deployment and the Parallel StatefulSet create all pods at once.
// Run: node bin/run-ts.js bench/statefulset-ordered.ts [pods] [nodes]

import { buildApiServer, ADMIN_USER } from '../src/apiserver/app.js';
import { buildInProcessClient } from '../src/client/in-process.js';
import { buildInformerFactory } from '../src/client/informer.js';
import type { Node, Pod } from '../src/api/types.js';
import { buildControllerManager } from '../src/controllers/manager.js';
import { buildNodeAgent, type NodeAgent } from '../src/kubelet/node-agent.js';
import { buildVirtualRuntime } from '../src/kubelet/runtime-virtual.js';
import { buildSharedSources } from '../src/kubelet/sources.js';
import { buildScheduler } from '../src/scheduler/scheduler.js';
import { buildMemoryStore } from '../src/store/index.js';

const N = Number(process.argv[2] ?? 100);
const NODES = Number(process.argv[3] ?? 10);

const store = buildMemoryStore();
const api = buildApiServer({ store });
const client = buildInProcessClient(api.service, ADMIN_USER);
const informers = buildInformerFactory(client);
const manager = buildControllerManager({ client, informers, options: { events: false } });
const scheduler = buildScheduler({ client, informers, options: { seed: 7, events: false } });
await manager.start();
await scheduler.start();
const podInf = informers.informerFor<Pod>({ group: '', version: 'v1', resource: 'pods' });
const sources = buildSharedSources(podInf,
  informers.informerFor<Node>({ group: '', version: 'v1', resource: 'nodes' }));
const agents: NodeAgent[] = [];
for (let i = 0; i < NODES; i++) {
  const a = buildNodeAgent({ client, nodeName: `node-${i}`, runtime: buildVirtualRuntime(),
    options: { sources, nodeIP: `172.18.0.${i + 2}`, cpu: '64', memory: '256Gi' } });
  await a.start();
  agents.push(a);
}

const template = (app: string) => ({ metadata: { labels: { app } },
  spec: { containers: [{ name: 'web', image: 'nginx' }] } });
const readyCount = (app: string) => podInf.cache.list().filter((p) => p.metadata.labels?.app === app
  && p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
  && !p.metadata.deletionTimestamp).length;

async function timeIt(app: string, resource: string, kind: string, extra: Record<string, unknown>): Promise<number> {
  const t0 = performance.now();
  await client.create({ group: 'apps', version: 'v1', resource, namespace: 'default' }, {
    apiVersion: 'apps/v1', kind, metadata: { name: app },
    spec: { replicas: N, selector: { matchLabels: { app } }, template: template(app), ...extra } });
  while (readyCount(app) < N) {
    if (performance.now() - t0 > 300_000) throw new Error(`${app}: timed out at ${readyCount(app)}/${N}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return Math.round(performance.now() - t0);
}

const deployment = await timeIt('dep', 'deployments', 'Deployment', {});
const ordered = await timeIt('web', 'statefulsets', 'StatefulSet', { serviceName: 'web' });
const parallel = await timeIt('par', 'statefulsets', 'StatefulSet', { serviceName: 'par', podManagementPolicy: 'Parallel' });
console.log(JSON.stringify({ bench: 'statefulset-ordered', pods: N, nodes: NODES,
  deploymentMs: deployment, statefulSetOrderedReadyMs: ordered, statefulSetParallelMs: parallel,
  orderedMsPerPod: Number((ordered / N).toFixed(1)) }));
for (const a of agents) await a.stop();
scheduler.stop();
await manager.stop();
informers.stop();
await api.close();
await store.close();
process.exit(0);
