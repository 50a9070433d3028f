// The reachability matrix over a model's pods for one (port, protocol), computed by equivalence
// classes: pods with the same namespace, labels, named ports and ipBlock memberships are
// indistinguishable to every policy, so each (class, class) pair is evaluated once.

import { evaluate } from './evaluate.js';
import { ipBlockMatches } from './evaluate.js';
import type { NetpolModel, PodInfo } from './model.js';
import { podKey } from './model.js';
import type { NetpolProtocol } from './types.js';
import { TruthTable } from './truth-table.js';

function ipBlocksOf(m: NetpolModel): string[][] {
  const out: string[][] = [];
  for (const np of m.policies) {
    for (const r of np.spec.ingress ?? []) for (const p of r.from ?? []) {
      if (p.ipBlock) out.push([p.ipBlock.cidr, ...(p.ipBlock.except ?? [])]);
    }
    for (const r of np.spec.egress ?? []) for (const p of r.to ?? []) {
      if (p.ipBlock) out.push([p.ipBlock.cidr, ...(p.ipBlock.except ?? [])]);
    }
  }
  return out;
}

/** The signature two pods share iff every policy treats them alike. */
export function podSignature(pod: PodInfo, blocks: readonly string[][]): string {
  const labels = Object.keys(pod.labels).sort().map((k) => [k, pod.labels[k]]);
  const ports = pod.ports.map((p) => `${p.name}:${p.port}/${p.protocol}`).sort();
  const inBlocks = blocks.map(([cidr, ...except]) =>
    (pod.ips.some((ip) => ipBlockMatches({ cidr: cidr!, except }, ip)) ? '1' : '0')).join('');
  return JSON.stringify([pod.namespace, labels, ports, inBlocks]);
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
  const blocks = ipBlocksOf(m);
  const sig = new Map<PodInfo, string>();
  for (const p of pods) sig.set(p, podSignature(p, blocks));
  const keys = pods.map(podKey);
  const table = new TruthTable(keys, keys);
  const memo = new Map<string, boolean>();
  for (const f of pods) {
    for (const t of pods) {
      const k = `${sig.get(f)}\u0000${sig.get(t)}`;
      let v = memo.get(k);
      if (v === undefined) {
        v = evaluate(m, { from: { pod: f }, to: t, port, protocol }).allowed;
        memo.set(k, v);
      }
      table.set(podKey(f), podKey(t), v);
    }
  }
  return { table, classes: new Set(sig.values()).size, evaluations: memo.size };
}
