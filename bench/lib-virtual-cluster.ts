// A control plane and N virtual node agents in one process over the in-process API server, for
// the workload benches (daemonset-rollout, statefulset-ordered): events off, seeded scheduler,
// nodes with room for any pod count here.

import { buildApiServer, ADMIN_USER } from '../src/apiserver/app.js';
import type { Node, Pod } from '../src/api/types.js';
import { buildInProcessClient } from '../src/client/in-process.js';
import { buildInformerFactory } from '../src/client/informer.js';
import { buildControllerManager } from '../src/controllers/manager.js';
import { buildNodeAgent, type NodeAgent } from '../src/kubelet/node-agent.js';
import { buildVirtualRuntime } from '../src/kubelet/runtime-virtual.js';
import { buildSharedSources } from '../src/kubelet/sources.js';
import { buildScheduler } from '../src/scheduler/scheduler.js';
import { buildMemoryStore } from '../src/store/index.js';

export interface VirtualCluster {
  readonly client: ReturnType<typeof buildInProcessClient>;
  readonly pods: () => readonly Pod[];
  /** Running, Ready, not terminating pods labelled app=`app` (and passing `extra`). */
  readyCount(app: string, extra?: (p: Pod) => boolean): number;
  stop(): Promise<void>;
}

/** Node i's InternalIP: 172.18.0.2 onwards, spilling into 172.19… past 65,534 nodes. */
const nodeIP = (i: number) => `172.${18 + Math.floor((i + 2) / 65536)}.${Math.floor((i + 2) / 256) % 256}.${(i + 2) % 256}`;

export async function startVirtualCluster(nodes: number): Promise<VirtualCluster> {
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
  for (let i = 0; i < nodes; i++) {
    const a = buildNodeAgent({ client, nodeName: `node-${i}`, runtime: buildVirtualRuntime(),
      options: { sources, nodeIP: nodeIP(i), cpu: '64', memory: '256Gi', recordEvents: false } });
    await a.start();
    agents.push(a);
  }
  // Every node Ready with its podCIDR before anything is timed.
  while (nodeInf.cache.list().filter((n) => n.spec?.podCIDR).length < nodes) await new Promise((r) => setTimeout(r, 10));
  const isReady = (p: Pod) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp
    && !!p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  return {
    client,
    pods: () => podInf.cache.list(),
    readyCount: (app, extra) => podInf.cache.list().filter((p) => p.metadata.labels?.app === app && isReady(p)
      && (!extra || extra(p))).length,
    async stop() {
      for (const a of agents) await a.stop();
      scheduler.stop();
      await manager.stop();
      informers.stop();
      await api.close();
      await store.close();
    },
  };
}
