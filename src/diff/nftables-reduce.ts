// The fast pre-pass for the semantic view of two large nft transactions (what kube-proxy writes,
// kdp's snapshots). The texts are aligned first (text-align.ts): only chains and elements that a
// differing line names can differ, so only their lines are kept and replayed
// (nftables-replay.ts); what still differs is written out again as a small `add` transaction
// and parsed for real. Chain facts depend only on the chain (its name says its Service), element
// facts only on the element, except that a `service-ips` address reads as a ClusterIP when
// `cluster-ips` holds it: both are kept together. Undefined: not applicable (parse it all).

import { splitTopLevel } from '../ruleset/nftables/transaction.js';
import { newTable, replay, rulesText, sameChain, Unsupported, wordEnd, type LightRuleset } from
  './nftables-replay.js';
import { differingRegions, type DifferingRegion } from './text-align.js';

/** Per table: the chains and (set → element keys) to write out on both sides. */
interface Kept {
  readonly chains: Set<string>;
  readonly elements: Map<string, Set<string>>;
}

const EMPTY = newTable();

function keptOf(a: LightRuleset, b: LightRuleset, key: string): Kept {
  const kept: Kept = { chains: new Set(), elements: new Map() };
  const ta = a.tables.get(key) ?? EMPTY;
  const tb = b.tables.get(key) ?? EMPTY;
  for (const name of ta.chains.ids.keys()) {
    if (!sameChain(a, ta, b, tb, name)) kept.chains.add(name);
  }
  for (const name of tb.chains.ids.keys()) if (!ta.chains.ids.has(name)) kept.chains.add(name);
  const keep = (set: string, k: string) => {
    let ks = kept.elements.get(set);
    if (!ks) kept.elements.set(set, (ks = new Set()));
    ks.add(k);
  };
  for (const [side, other] of [[ta, tb], [tb, ta]] as const) {
    for (const [set, s] of side.sets) {
      const os = other.sets.get(set);
      for (const [k, e] of s.elements) if (os?.elements.get(k) !== e) keep(set, k);
    }
  }
  // A service-ips address and its cluster-ips membership go together.
  const ips = new Set<string>();
  for (const k of kept.elements.get('service-ips') ?? []) ips.add(k.split(' . ')[0]!);
  for (const k of kept.elements.get('cluster-ips') ?? []) ips.add(k);
  if (ips.size > 0) {
    for (const side of [ta, tb]) {
      for (const k of side.sets.get('service-ips')?.elements.keys() ?? []) {
        if (ips.has(k.slice(0, k.indexOf(' . ')))) keep('service-ips', k);
      }
    }
    for (const ip of ips) keep('cluster-ips', ip);
  }
  return kept;
}

function render(rs: LightRuleset, kept: Map<string, Kept>): string {
  const out: string[] = [];
  for (const [key, t] of rs.tables) {
    out.push(...t.decls);
    const k = kept.get(key)!;
    for (const s of t.sets.values()) out.push(s.decl);
    for (const name of k.chains) {
      const id = t.chains.ids.get(name);
      if (id === undefined) continue;
      out.push(rs.text.slice(t.chains.declStart[id], t.chains.declEnd[id]));
      if (t.chains.spans[id]!.length) out.push(rulesText(rs.text, t.chains.spans[id]!));
    }
    for (const [set, keys] of k.elements) {
      const s = t.sets.get(set);
      if (!s) continue;
      const prefix = `add element ${key} ${set} { `;
      for (const ek of keys) {
        const e = s.elements.get(ek);
        if (e !== undefined) out.push(`${prefix}${e} }`);
      }
    }
  }
  return `${out.join('\n')}\n`;
}

/** The 5th word of a line (the chain of a chain or rule operation) and the 2nd (object). */
function lineWords(text: string, start: number, nl: number):
  { object: string; name: string; nameEnd: number } {
  const p1 = wordEnd(text, start, nl);
  const p2 = wordEnd(text, p1 + 1, nl);
  const p4 = wordEnd(text, wordEnd(text, p2 + 1, nl) + 1, nl);
  const nameEnd = wordEnd(text, p4 + 1, nl);
  return { object: text.slice(p1 + 1, p2), name: text.slice(p4 + 1, nameEnd), nameEnd };
}

/** What differing lines name: chains, and the first key part (address) of elements. */
interface Dirty {
  readonly chains: Set<string>;
  readonly keyHeads: Set<string>;
}

/** The first part of each element key in `{ … }` (a line's tail after the set name). */
function keyHeads(body: string): string[] {
  if (!body.startsWith('{ ') || !body.endsWith(' }')) return [];
  return splitTopLevel(body.slice(2, -2)).map((e) => e.split(' ')[0]!);
}

/**
 * What the differing lines name. Outside the differing stretches both texts are the same lines
 * in the same order, so every other chain and element goes through the same operations on both
 * sides. Undefined when a differing line empties a table, set or map (it touches everything).
 */
function dirtyOf(sides: readonly [string, string], regions: readonly DifferingRegion[]):
  Dirty | undefined {
  const dirty: Dirty = { chains: new Set(), keyHeads: new Set() };
  for (const r of regions) {
    for (const [text, [from, to]] of [[sides[0], r.a], [sides[1], r.b]] as const) {
      let pos = from;
      while (pos < to) {
        let nl = text.indexOf('\n', pos);
        if (nl < 0 || nl > to) nl = to;
        const { object, name, nameEnd } = lineWords(text, pos, nl);
        const create = text.startsWith('add ', pos) || text.startsWith('create ', pos);
        if (object === 'table' || ((object === 'set' || object === 'map') && !create)) {
          return undefined;
        }
        if (object === 'chain' || object === 'rule') dirty.chains.add(name);
        if (object === 'element') {
          for (const h of keyHeads(text.slice(nameEnd + 1, nl))) dirty.keyHeads.add(h);
        }
        pos = nl + 1;
      }
    }
  }
  return dirty;
}

/**
 * The text without the chain, rule and element lines that `dirty` does not name (elements are
 * kept by their first key part, so a service address keeps its cluster-ips membership).
 */
function onlyDirty(text: string, dirty: Dirty): string {
  const parts: string[] = [];
  let spanStart = 0;
  let pos = 0;
  let rulePrefix = '\n';
  let keepRules = true;
  let chainPrefixes: string[] = [];
  const drop = (start: number, next: number) => {
    if (start > spanStart) parts.push(text.slice(spanStart, start));
    spanStart = next;
  };
  while (pos < text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0) nl = text.length;
    const start = pos;
    pos = nl + 1;
    if (text.startsWith(rulePrefix, start)) {
      if (!keepRules) drop(start, pos);
      continue;
    }
    rulePrefix = '\n';
    const p = chainPrefixes.find((x) => text.startsWith(x, start));
    if (p !== undefined) {
      // `add chain T NAME …` / `flush chain T NAME` of the table last seen.
      const name = text.slice(start + p.length, wordEnd(text, start + p.length, nl));
      if (!dirty.chains.has(name)) drop(start, pos);
      continue;
    }
    const { object, name, nameEnd } = lineWords(text, start, nl);
    if (object === 'rule' || object === 'chain') {
      const kept = dirty.chains.has(name);
      if (object === 'rule') {
        rulePrefix = text.slice(start, nameEnd + 1);
        keepRules = kept;
      } else {
        const head = text.slice(start, nameEnd - name.length);
        const tail = head.slice(head.indexOf(' chain ') + 7);
        chainPrefixes = ['add', 'flush'].map((v) => `${v} chain ${tail}`);
      }
      if (!kept) drop(start, pos);
    } else if (object === 'element') {
      const body = text.slice(nameEnd + 1, nl);
      const multi = body.includes(',');
      if (!multi && !dirty.keyHeads.has(keyHeads(body)[0] ?? '')) drop(start, pos);
    }
  }
  drop(text.length, text.length);
  return parts.join('');
}

/** The two transactions with what both share removed, or undefined when not applicable. */
export function reduceNftPair(a: string, b: string): [string, string] | undefined {
  const regions = differingRegions(a, b);
  const dirty = regions && dirtyOf([a, b], regions);
  if (dirty) {
    a = onlyDirty(a, dirty);
    b = onlyDirty(b, dirty);
  }
  return reduceReplayed(a, b);
}

function reduceReplayed(a: string, b: string): [string, string] | undefined {
  let ra: LightRuleset;
  let rb: LightRuleset;
  try {
    ra = replay(a);
    rb = replay(b);
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
  const kept = new Map<string, Kept>();
  for (const key of new Set([...ra.tables.keys(), ...rb.tables.keys()])) {
    kept.set(key, keptOf(ra, rb, key));
  }
  return [render(ra, kept), render(rb, kept)];
}
