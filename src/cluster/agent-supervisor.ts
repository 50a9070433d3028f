// `kdp node stop|start NAME` without a side channel: the CLI sets the Node annotation
// `kdp.dev/agent` to `stopped` or `running` through the API server; this loop, in the process
// that hosts the agents, stops or restarts that node's agent to match.

import type { Node } from '../api/types.js';
import type { InformerFactory } from '../client/informer.js';
import type { NodeSet, NodeSpec } from './node-set.js';

export const AGENT_ANNOTATION = 'kdp.dev/agent';

const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;

export function superviseAgents(
  informers: InformerFactory, nodeSet: NodeSet, nodes: readonly NodeSpec[], progress: (l: string) => void,
): { stop(): void } {
  let stopped = false;
  let chain = Promise.resolve();
  const react = (n: Node) => {
    const spec = nodes.find((x) => x.name === n.metadata.name);
    const want = n.metadata.annotations?.[AGENT_ANNOTATION];
    if (!spec || stopped || want === undefined) return;
    chain = chain.then(async () => {
      if (want === 'stopped' && nodeSet.isRunning(spec.name)) {
        await nodeSet.stop(spec.name);
        progress(`node ${spec.name}: agent stopped (no more heartbeats)`);
      } else if (want === 'running' && !nodeSet.isRunning(spec.name)) {
        await nodeSet.start(spec);
        progress(`node ${spec.name}: agent started`);
      }
    }).catch((e) => progress(`node ${spec.name}: ${(e as Error).message}`));
  };
  const inf = informers.informerFor<Node>(NODES);
  inf.addEventHandler({ onAdd: react, onUpdate: (_o, n) => react(n) });
  return { stop: () => { stopped = true; } };
}
