// StatefulSet of N ordered pods beside a Deployment of N replicas (and a Parallel StatefulSet),
// on virtual nodes in one process over the in-process API server: time from create until every
// pod is Running and Ready. OrderedReady creates one pod per predecessor's readiness, so its time
// is N round trips (create → schedule → kubelet Running+Ready → controller sees it); the
// Deployment and the Parallel StatefulSet create all pods at once.
// Run: node bin/run-ts.js bench/statefulset-ordered.ts [pods] [nodes]

import { startVirtualCluster } from './lib-virtual-cluster.js';

const N = Number(process.argv[2] ?? 100);
const NODES = Number(process.argv[3] ?? 10);

const cluster = await startVirtualCluster(NODES);
const { client } = cluster;
const template = (app: string) => ({ metadata: { labels: { app } },
  spec: { containers: [{ name: 'web', image: 'nginx' }] } });
const readyCount = (app: string) => cluster.readyCount(app);

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
await cluster.stop();
process.exit(0);
