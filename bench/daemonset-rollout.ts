// DaemonSet roll-out over many virtual nodes beside a Deployment of as many replicas on the same
// nodes, in one process over the in-process API server: time from create until every pod is
// Running and Ready; then a rolling update of the DaemonSet (a template change, maxUnavailable
// 10%) until every node runs an updated Ready pod. The DaemonSet controller creates its pods with
// a required node affinity for the default scheduler, as upstream's; the Deployment's pods are
// placed by the scheduler's scoring.
// Run: node bin/run-ts.js bench/daemonset-rollout.ts [nodes]

import { buildApiServer, ADMIN_USER } from '../src/apiserver/app.js';
import { buildInProcessClient } from '../src/client/in-process.js';
import { buildInformerFactory } from '../src/client/informer.js';
import type { Node, Pod } from '../src/api/types.js';
import { buildControllerManager } from '../src/controllers/manager.js';
import { REVISION_HASH_LABEL } from '../src/controllers/daemonset/controller.js';
import { buildNodeAgent, type NodeAgent } from '../src/kubelet/node-agent.js';
import { buildVirtualRuntime } from '../src/kubelet/runtime-virtual.js';
import { buildSharedSources } from '../src/kubelet/sources.js';
import { buildScheduler } from '../src/scheduler/scheduler.js';
import { buildMemoryStore } from '../src/store/index.js';

const NODES = Number(process.argv[2] ?? 1000);

const store = buildMemoryStore();
const api = buildApiServer({ store });
const client = buildInProcessClient(api.service, ADMIN_USER);
const informers = buildInformerFactory(client);
// A /8 of /24s: room for a podCIDR per node at any size here.
const manager = buildControllerManager({ client, informers, options: { events: false, clusterCIDR: '10.0.0.0/8' } });
const scheduler = buildScheduler({ client, informers, options: { seed: 7, events: false } });
await manager.start();
await scheduler.start();
const podInf = informers.informerFor<Pod>({ group: '', version: 'v1', resource: 'pods' });
const nodeInf = informers.informerFor<Node>({ group: '', version: 'v1', resource: 'nodes' });
const sources = buildSharedSources(podInf, nodeInf);
const agents: NodeAgent[] = [];
const tNodes = performance.now();
for (let i = 0; i < NODES; i++) {
  const a = buildNodeAgent({ client, nodeName: `node-${i}`, runtime: buildVirtualRuntime(),
    options: { sources, nodeIP: `172.${18 + Math.floor((i + 2) / 65536)}.${Math.floor((i + 2) / 256) % 256}.${(i + 2) % 256}`,
      cpu: '64', memory: '256Gi', recordEvents: false } });
  await a.start();
  agents.push(a);
}
// Every node Ready with its podCIDR before anything is timed.
while (nodeInf.cache.list().filter((n) => n.spec?.podCIDR).length < NODES) await new Promise((r) => setTimeout(r, 10));
const nodesMs = Math.round(performance.now() - tNodes);

const template = (app: string, version = '1') => ({ metadata: { labels: { app }, annotations: { version } },
  spec: { containers: [{ name: 'web', image: 'nginx' }] } });
const isReady = (p: Pod) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp
  && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
const readyCount = (app: string, hash?: string) => podInf.cache.list().filter((p) => p.metadata.labels?.app === app
  && isReady(p) && (!hash || p.metadata.labels?.[REVISION_HASH_LABEL] === hash)).length;

async function until(what: string, t0: number, done: () => boolean): Promise<number> {
  while (!done()) {
    if (performance.now() - t0 > 600_000) throw new Error(`${what}: timed out`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return Math.round(performance.now() - t0);
}

const DS = { group: 'apps', version: 'v1', resource: 'daemonsets', namespace: 'default' } as const;
let t0 = performance.now();
await client.create(DS, { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'ds' },
  spec: { selector: { matchLabels: { app: 'ds' } }, template: template('ds'),
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } } } });
const daemonSetMs = await until('daemonset', t0, () => readyCount('ds') === NODES);

t0 = performance.now();
await client.create({ group: 'apps', version: 'v1', resource: 'deployments', namespace: 'default' }, {
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'dep' },
  spec: { replicas: NODES, selector: { matchLabels: { app: 'dep' } }, template: template('dep') } });
const deploymentMs = await until('deployment', t0, () => readyCount('dep') === NODES);

// The rolling update: a new template; done when every node runs a Ready pod of the new revision.
const oldHash = podInf.cache.list().find((p) => p.metadata.labels?.app === 'ds')!.metadata.labels![REVISION_HASH_LABEL];
t0 = performance.now();
await client.patch(DS, 'ds', 'merge', { spec: { template: { metadata: { annotations: { version: '2' } } } } });
let hash: string | undefined;
const rollingUpdateMs = await until('rolling update', t0, () => {
  hash ??= podInf.cache.list().find((p) => p.metadata.labels?.app === 'ds'
    && p.metadata.labels?.[REVISION_HASH_LABEL] !== oldHash)?.metadata.labels?.[REVISION_HASH_LABEL];
  return hash !== undefined && readyCount('ds', hash) === NODES && readyCount('ds') === NODES;
});

console.log(JSON.stringify({ bench: 'daemonset-rollout', nodes: NODES, nodesReadyMs: nodesMs,
  daemonSetMs, deploymentMs, daemonSetRollingUpdateMs: rollingUpdateMs, rollingMaxUnavailable: '10%',
  daemonSetMsPerPod: Number((daemonSetMs / NODES).toFixed(2)), deploymentMsPerPod: Number((deploymentMs / NODES).toFixed(2)) }));
for (const a of agents) await a.stop();
scheduler.stop();
await manager.stop();
informers.stop();
await api.close();
await store.close();
process.exit(0);
