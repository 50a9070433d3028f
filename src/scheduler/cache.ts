// The scheduler's view of the cluster (upstream internal/cache): every node with the pods counted
// on it, in the order nodes are tried, and the pods assumed onto a node whose binding is still
// being written. `account` moves a pod's requests to the node it is on now (none when it has
// finished or is gone).

import type { Node, Pod } from '../api/types.js';
import { addPodToNode, buildNodeInfo, removePodFromNode, setNode, type NodeInfo } from './node-info.js';

export interface SchedulerCache {
  /** Nodes in the order they are tried (round-robin from `nextStart`). */
  readonly order: readonly NodeInfo[];
  /** Pods chosen for a node whose binding has not come back yet. */
  readonly assumed: Set<string>;
  /** Counts `pod` (undefined: nothing) on the node it names; forgets it on the previous one. */
  account(key: string, pod: Pod | undefined): void;
  /** Whether the pod at `key` is counted on a node. */
  counts(key: string): boolean;
  /** Adds or updates a node; a new node takes the pods already known to be on it. */
  upsertNode(node: Node, podAt: (key: string) => Pod | undefined): void;
  removeNode(name: string): void;
}

export const isTerminal = (p: Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

export function buildSchedulerCache(): SchedulerCache {
  const nodes = new Map<string, NodeInfo>();
  let order: NodeInfo[] = [];
  const podNode = new Map<string, string>(); // pod key → node it is counted on
  return {
    get order() { return order; },
    assumed: new Set<string>(),
    account(key, pod) {
      const nodeName = pod && !isTerminal(pod) ? pod.spec?.nodeName : undefined;
      const prev = podNode.get(key);
      if (prev && prev !== nodeName) {
        const info = nodes.get(prev);
        if (info) removePodFromNode(info, key);
        podNode.delete(key);
      }
      if (nodeName) {
        const info = nodes.get(nodeName);
        if (info && pod) addPodToNode(info, key, pod);
        podNode.set(key, nodeName);
      }
    },
    counts: (key) => podNode.has(key),
    upsertNode(node, podAt) {
      const nm = node.metadata.name!;
      const info = nodes.get(nm);
      if (info) { setNode(info, node); return; }
      const fresh = buildNodeInfo(node);
      nodes.set(nm, fresh);
      order.push(fresh);
      for (const [k, n] of podNode) {
        if (n !== nm) continue;
        const p = podAt(k);
        if (p) addPodToNode(fresh, k, p);
      }
    },
    removeNode(name) {
      nodes.delete(name);
      order = order.filter((i) => i.node.metadata.name !== name);
    },
  };
}
