// Incremental updates of a node's `inet kdp-netpol` table. Most changes a controller sees (a pod
// starts or goes, labels change, a namespace is relabelled) only move addresses in and out of the
// peer sets and the per-pod verdict maps: the chains and rules stay the same. For those, the
// update is one transaction that flushes and refills just the sets/maps whose elements changed,
// instead of re-creating the table. Anything else (a chain, rule, set or map added or removed)
// is a full rewrite (undefined here): the compiler's text re-creates the table atomically.

import { NETPOL_TABLE } from './nftables.js';

const T = `inet ${NETPOL_TABLE}`;
const ELEMENT = `add element ${T} `;

/** Element lines by set/map name, and every other line in order. */
function split(text: string): { structure: string[]; elements: Map<string, string> } {
  const structure: string[] = [];
  const elements = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (!line) continue;
    if (line.startsWith(ELEMENT)) {
      const name = line.slice(ELEMENT.length).split(' ', 1)[0]!;
      elements.set(name, line);
    } else structure.push(line);
  }
  return { structure, elements };
}

/**
 * The `nft -f` transaction that turns the table compiled as `prev` into `next`, when they differ
 * only in set/map elements; undefined when a full rewrite is needed; '' when equal.
 */
export function netpolDelta(prev: string, next: string): string | undefined {
  const a = split(prev);
  const b = split(next);
  if (a.structure.length !== b.structure.length || a.structure.some((l, i) => l !== b.structure[i])) {
    return undefined;
  }
  const kind = new Map<string, 'set' | 'map'>();
  for (const l of b.structure) {
    const m = new RegExp(`^add (set|map) ${T} (\\S+) `).exec(l);
    if (m) kind.set(m[2]!, m[1] as 'set' | 'map');
  }
  const out: string[] = [];
  const names = [...new Set([...a.elements.keys(), ...b.elements.keys()])].sort();
  for (const name of names) {
    const [was, now] = [a.elements.get(name), b.elements.get(name)];
    if (was === now) continue;
    const k = kind.get(name);
    if (!k) return undefined; // elements of something the structure does not declare
    out.push(`flush ${k} ${T} ${name}`);
    if (now) out.push(now);
  }
  return out.length ? `${out.join('\n')}\n` : '';
}
