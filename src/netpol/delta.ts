// Incremental updates of a node's `inet kdp-netpol` table. The compiler's text is a full rewrite
// (the table re-created in one transaction); between two such texts of the same node, the kernel
// only needs what changed, in one transaction:
// - set and verdict-map elements: `delete element` the ones gone, `add element` the new ones
//   (a map entry whose verdict changed: deleted and re-added);
// - a pod's chain whose rules changed: `flush chain` and its rules again; a new chain (a pod
//   became isolated) added with its rules, a chain gone flushed and deleted;
// - sets and maps new or gone (a policy rule's peer set) added or deleted.
// Order within the transaction: new sets (with elements) → new chains → rules of new and changed
// chains → element changes of existing sets/maps → chains gone → sets gone, so nothing is
// referenced before it exists or deleted while referenced. Anything else (the table's comment,
// the forward chain, a set's type) is a full rewrite: undefined here.

import { NETPOL_TABLE } from './nftables.js';

const T = `inet ${NETPOL_TABLE}`;
const ELEMENT = `add element ${T} `;
const CHAIN = `add chain ${T} `;
const RULE = `add rule ${T} `;
const DECL = new RegExp(`^add (set|map) ${T.replace(/[-/]/g, '\\$&')} (\\S+) `);

/** A table text taken apart: fixed lines, chains' rules, set/map declarations and elements. */
export interface ParsedTable {
  readonly fixed: readonly string[];
  readonly chains: ReadonlyMap<string, readonly string[]>;
  readonly decls: ReadonlyMap<string, { readonly kind: 'set' | 'map'; readonly line: string }>;
  readonly elements: ReadonlyMap<string, readonly string[]>;
}

// A kernel applier diffs each new text against the previous one; the previous one's parse is kept.
const parsed = new Map<string, ParsedTable>();

export function parseTable(text: string): ParsedTable {
  const hit = parsed.get(text);
  if (hit) return hit;
  const fixed: string[] = [];
  const chains = new Map<string, string[]>();
  const decls = new Map<string, { kind: 'set' | 'map'; line: string }>();
  const elements = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    if (!line) continue;
    if (line.startsWith(ELEMENT)) {
      const rest = line.slice(ELEMENT.length);
      const name = rest.split(' ', 1)[0]!;
      const body = rest.slice(name.length).trim();
      elements.set(name, body.slice(1, -1).trim().split(', '));
    } else if (line.startsWith(CHAIN) && !line.includes('{')) {
      chains.set(line.slice(CHAIN.length), []);
    } else if (line.startsWith(RULE)) {
      const chain = line.slice(RULE.length).split(' ', 1)[0]!;
      const rules = chains.get(chain);
      if (rules) rules.push(line); else fixed.push(line);
    } else {
      const m = DECL.exec(line);
      if (m) decls.set(m[2]!, { kind: m[1] as 'set' | 'map', line });
      else fixed.push(line);
    }
  }
  const out = { fixed, chains, decls, elements };
  if (parsed.size >= 4) parsed.delete(parsed.keys().next().value!);
  parsed.set(text, out);
  return out;
}

/** Map elements (`ip : jump chain`) by key; set elements by themselves. */
const keyOf = (kind: 'set' | 'map', e: string): string => (kind === 'map' ? e.split(' : ', 1)[0]! : e);

/**
 * The `nft -f` transaction that turns the table compiled as `prev` into `next`: '' when equal,
 * undefined when only a full rewrite can (see the header).
 */
export function netpolDelta(prev: string, next: string): string | undefined {
  if (prev === next) return '';
  const a = parseTable(prev);
  const b = parseTable(next);
  if (a.fixed.length !== b.fixed.length || a.fixed.some((l, i) => l !== b.fixed[i])) return undefined;
  for (const [name, d] of b.decls) {
    const was = a.decls.get(name);
    if (was && was.line !== d.line) return undefined;
  }
  const newSets: string[] = [];
  const newChains: string[] = [];
  const rules: string[] = [];
  const elems: string[] = [];
  const goneChains: string[] = [];
  const goneSets: string[] = [];
  for (const [name, d] of b.decls) {
    if (a.decls.has(name)) continue;
    newSets.push(d.line);
    const el = b.elements.get(name);
    if (el) newSets.push(`${ELEMENT}${name} { ${el.join(', ')} }`);
  }
  for (const [name, rs] of b.chains) {
    const was = a.chains.get(name);
    if (!was) { newChains.push(`${CHAIN}${name}`); rules.push(...rs); continue; }
    if (was.length === rs.length && was.every((r, i) => r === rs[i])) continue;
    rules.push(`flush chain ${T} ${name}`, ...rs);
  }
  for (const [name, d] of b.decls) {
    if (!a.decls.has(name)) continue;
    const before = a.elements.get(name) ?? [];
    const after = b.elements.get(name) ?? [];
    const had = new Set(before);
    const has = new Set(after);
    const gone = before.filter((e) => !has.has(e)).map((e) => keyOf(d.kind, e));
    const added = after.filter((e) => !had.has(e));
    if (gone.length) elems.push(`delete element ${T} ${name} { ${gone.join(', ')} }`);
    if (added.length) elems.push(`${ELEMENT}${name} { ${added.join(', ')} }`);
  }
  for (const name of a.chains.keys()) {
    if (!b.chains.has(name)) goneChains.push(`flush chain ${T} ${name}`, `delete chain ${T} ${name}`);
  }
  for (const [name, d] of a.decls) if (!b.decls.has(name)) goneSets.push(`delete ${d.kind} ${T} ${name}`);
  const out = [...newSets, ...newChains, ...rules, ...elems, ...goneChains, ...goneSets];
  return out.length ? `${out.join('\n')}\n` : '';
}
