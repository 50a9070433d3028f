// DaemonSet roll-out over many virtual nodes beside a Deployment of as many replicas on the same
// nodes, in one process over the in-process API server: time from create until every pod is
// Running and Ready; then a rolling update of the DaemonSet (a template change, maxUnavailable
// 10%) until every node runs an updated Ready pod. The DaemonSet controller creates its pods with
// a required node affinity for the default scheduler, as upstream's; the Deployment's pods are
// placed by the scheduler's scoring.
// Run: node bin/run-ts.js bench/daemonset-rollout.ts [nodes]

import type { Pod } from '../src/api/types.js';
import { REVISION_HASH_LABEL } from '../src/controllers/daemonset/controller.js';
import { startVirtualCluster } from './lib-virtual-cluster.js';

const NODES = Number(process.argv[2] ?? 1000);

const tNodes = performance.now();
const cluster = await startVirtualCluster(NODES);
const nodesMs = Math.round(performance.now() - tNodes);
const { client } = cluster;

const template = (app: string, version = '1') => ({ metadata: { labels: { app }, annotations: { version } },
  spec: { containers: [{ name: 'web', image: 'nginx' }] } });
const readyCount = (app: string, hash?: string) =>
  cluster.readyCount(app, hash ? (p: Pod) => p.metadata.labels?.[REVISION_HASH_LABEL] === hash : undefined);

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
const oldHash = cluster.pods().find((p) => p.metadata.labels?.app === 'ds')!.metadata.labels![REVISION_HASH_LABEL];
t0 = performance.now();
await client.patch(DS, 'ds', 'merge', { spec: { template: { metadata: { annotations: { version: '2' } } } } });
let hash: string | undefined;
const rollingUpdateMs = await until('rolling update', t0, () => {
  hash ??= cluster.pods().find((p) => p.metadata.labels?.app === 'ds'
    && p.metadata.labels?.[REVISION_HASH_LABEL] !== oldHash)?.metadata.labels?.[REVISION_HASH_LABEL];
  return hash !== undefined && readyCount('ds', hash) === NODES && readyCount('ds') === NODES;
});

console.log(JSON.stringify({ bench: 'daemonset-rollout', nodes: NODES, nodesReadyMs: nodesMs,
  daemonSetMs, deploymentMs, daemonSetRollingUpdateMs: rollingUpdateMs, rollingMaxUnavailable: '10%',
  daemonSetMsPerPod: Number((daemonSetMs / NODES).toFixed(2)), deploymentMsPerPod: Number((deploymentMs / NODES).toFixed(2)) }));
await cluster.stop();
process.exit(0);
