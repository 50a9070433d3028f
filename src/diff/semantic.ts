// The semantic diff: per Service port, the facts added, removed or changed between two sides.
// Groups are sorted by name with the Service-less group ('') last; keys within a group sorted.

import type { FactTable, SemanticChange } from './types.js';

export function semanticDiff(a: FactTable, b: FactTable): SemanticChange[] {
  const names = [...new Set([...a.groups.keys(), ...b.groups.keys()])]
    .sort((x, y) => (x === '' ? 1 : y === '' ? -1 : x < y ? -1 : x > y ? 1 : 0));
  const out: SemanticChange[] = [];
  const empty = new Map<string, string>();
  for (const group of names) {
    const ga = a.groups.get(group) ?? empty;
    const gb = b.groups.get(group) ?? empty;
    const keys = [...new Set([...ga.keys(), ...gb.keys()])].sort();
    for (const key of keys) {
      const before = ga.get(key);
      const after = gb.get(key);
      if (before === after) continue;
      if (before === undefined) out.push({ group, kind: 'added', key, after });
      else if (after === undefined) out.push({ group, kind: 'removed', key, before });
      else out.push({ group, kind: 'changed', key, before, after });
    }
  }
  return out;
}

/** Facts that read best as a toggle (`masquerade for external traffic: added`). */
const isToggle = (c: SemanticChange) => c.key.startsWith('masquerade ');

/** One line: `shop/web:http  + endpoint 10.244.2.7:8080; probability 0.3333333333`. */
export function changeLine(c: SemanticChange): string {
  const who = `${c.family ? `${c.family} ` : ''}${c.group === '' ? '(no service)' : c.group}`;
  let what: string;
  if (c.kind === 'changed') what = changedText(c.key, c.before ?? '', c.after ?? '');
  else if (isToggle(c) && !(c.before || c.after)) what = `${c.key}: ${c.kind}`;
  else {
    const v = c.kind === 'added' ? c.after : c.before;
    const sep = v?.startsWith('probability') ? '; ' : ': ';
    what = `${c.kind === 'added' ? '+' : '-'} ${c.key}${v ? `${sep}${v}` : ''}`;
  }
  return `${who}  ${what}`;
}

/** `endpoint X; probability 0.5 → 0.25` when both values name the same quantity. */
function changedText(key: string, before: string, after: string): string {
  const word = /^(\S+) /.exec(before)?.[1];
  if (word && after.startsWith(`${word} `)) {
    return `${key}; ${before} → ${after.slice(word.length + 1)}`;
  }
  return `${key}: ${before} → ${after}`;
}
