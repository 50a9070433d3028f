// Small helpers the per-format fact readers share.

import type { FactTable, ProbeTarget } from './types.js';

export function newFacts(): FactTable {
  return { groups: new Map(), targets: [] };
}

export function setFact(t: FactTable, group: string, key: string, value = ''): void {
  let g = t.groups.get(group);
  if (!g) t.groups.set(group, (g = new Map()));
  // The same key twice in one group (e.g. a rule repeated) keeps both, distinguishable.
  let k = key;
  for (let n = 2; g.has(k) && g.get(k) !== value; n++) k = `${key} (#${n})`;
  g.set(k, value);
}

export function addTarget(t: FactTable, target: ProbeTarget): void {
  t.targets.push(target);
}

/** Probabilities as kube-proxy prints them (10 decimals). */
export function formatProbability(p: number): string {
  return p.toFixed(10);
}

export function lowerProto(p: string | undefined): 'tcp' | 'udp' | 'sctp' | undefined {
  const x = p?.toLowerCase();
  return x === 'tcp' || x === 'udp' || x === 'sctp' ? x : undefined;
}
