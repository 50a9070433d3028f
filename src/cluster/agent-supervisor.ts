// `kdp node stop|start|partition|crash NAME` without a side channel: the CLI sets the Node
// annotation `kdp.dev/agent` to `stopped`, `running`, `partitioned` or `crashed` through the API
// server; this loop, in the process that hosts the agents, makes that node so (node-set.ts).

import type { Node } from '../api/types.js';
import type { InformerFactory } from '../client/informer.js';
import type { NodeFailure, NodeSet, NodeSpec } from './node-set.js';

export const AGENT_ANNOTATION = 'kdp.dev/agent';

export type AgentState = 'running' | NodeFailure;
export const AGENT_STATES: readonly AgentState[] = ['running', 'stopped', 'partitioned', 'crashed'];

const DONE: Record<AgentState, string> = {
  running: 'agent started',
  stopped: 'agent stopped (no more heartbeats)',
  partitioned: 'partitioned (link down, agent cut off; pods keep running)',
  crashed: 'crashed (power off: every pod process killed, link down)',
};

const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;

export function superviseAgents(
  informers: InformerFactory, nodeSet: NodeSet, nodes: readonly NodeSpec[], progress: (l: string) => void,
): { stop(): void } {
  let stopped = false;
  let chain = Promise.resolve();
  const react = (n: Node) => {
    const spec = nodes.find((x) => x.name === n.metadata.name);
    const want = n.metadata.annotations?.[AGENT_ANNOTATION] as AgentState | undefined;
    if (!spec || stopped || want === undefined || !AGENT_STATES.includes(want)) return;
    chain = chain.then(async () => {
      const was = nodeSet.stateOf(spec.name);
      if (was === want || was === undefined) return;
      if (want === 'running') await nodeSet.start(spec);
      else if (want === 'stopped') await nodeSet.stop(spec.name);
      else await nodeSet.fail(spec.name, want);
      progress(`node ${spec.name}: ${DONE[want]}`);
    }).catch((e) => progress(`node ${spec.name}: ${(e as Error).message}`));
  };
  const inf = informers.informerFor<Node>(NODES);
  inf.addEventHandler({ onAdd: react, onUpdate: (_o, n) => react(n) });
  return { stop: () => { stopped = true; } };
}
