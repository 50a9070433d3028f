// The reachability matrix over a model's pods for one (port, protocol), computed by equivalence
// classes: pods that the same policies isolate and the same peers match, with the same named
// ports, are indistinguishable to every policy, so each (class, class) pair is evaluated once.

import { isAllowed, isolating, peerMatches } from './evaluate.js';
import type { NetpolModel, PodInfo } from './model.js';
import { podKey } from './model.js';
import type { NetpolProtocol, NetworkPolicyPeer } from './types.js';
import { TruthTable } from './truth-table.js';

/**
 * The signature two pods share iff every policy treats them alike: which policies isolate
 * them (each direction), which peers of which rules match them (pod/namespace selectors and
 * ipBlocks over their IPs), and their named ports. Pods with equal signatures give equal rows
 * and columns.
 */
function signatures(m: NetpolModel, pods: readonly PodInfo[]): Map<PodInfo, string> {
  const peers: Array<{ peer: NetworkPolicyPeer; ns: string }> = [];
  for (const np of m.policies) {
    const ns = np.metadata.namespace ?? 'default';
    for (const r of np.spec.ingress ?? []) for (const peer of r.from ?? []) peers.push({ peer, ns });
    for (const r of np.spec.egress ?? []) for (const peer of r.to ?? []) peers.push({ peer, ns });
  }
  const index = new Map(m.policies.map((np, i) => [np, i]));
  const out = new Map<PodInfo, string>();
  for (const pod of pods) {
    const iso = (['Ingress', 'Egress'] as const)
      .map((t) => isolating(m, pod, t).map((np) => index.get(np)).join(','));
    const matched: number[] = [];
    peers.forEach((p, i) => { if (peerMatches(m, p.peer, p.ns, { pod })) matched.push(i); });
    const ports = pod.ports.map((p) => `${p.name}:${p.port}/${p.protocol}`).sort().join(',');
    out.set(pod, `${iso.join('|')}|${matched.join(',')}|${ports}`);
  }
  return out;
}

export interface MatrixResult {
  readonly table: TruthTable;
  /** Number of distinct classes (and so rows/columns actually evaluated). */
  readonly classes: number;
  readonly evaluations: number;
}

/** Rows = from, columns = to, in `pods` order (default: the model's order). */
export function reachabilityMatrix(m: NetpolModel, port: number, protocol: NetpolProtocol,
  pods: readonly PodInfo[] = m.pods): MatrixResult {
  const sig = signatures(m, pods);
  const classOf = new Map<string, number>();
  const cls = pods.map((p) => {
    const k = sig.get(p)!;
    if (!classOf.has(k)) classOf.set(k, classOf.size);
    return classOf.get(k)!;
  });
  const n = classOf.size;
  const memo = new Int8Array(n * n).fill(-1);
  const keys = pods.map(podKey);
  const table = new TruthTable(keys, keys);
  let evaluations = 0;
  for (let i = 0; i < pods.length; i++) {
    for (let j = 0; j < pods.length; j++) {
      const k = cls[i]! * n + cls[j]!;
      if (memo[k] === -1) {
        evaluations++;
        memo[k] = isAllowed(m, { from: { pod: pods[i]! }, to: pods[j]!, port, protocol }) ? 1 : 0;
      }
      table.set(keys[i]!, keys[j]!, memo[k] === 1);
    }
  }
  return { table, classes: n, evaluations };
}
