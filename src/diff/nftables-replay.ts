// A light replay of an nft transaction (the `nft -f` text kube-proxy writes) over unparsed
// lines: tables, chains (offsets of their declaring line and of their rule lines), sets and
// maps (element texts by key), following the same add/flush/delete rules as the fake
// (`ruleset/nftables/fake.ts`). Anything else throws Unsupported: the caller parses it all.

import { elementKey } from '../ruleset/nftables/model.js';
import { parseElement, splitTopLevel } from '../ruleset/nftables/transaction.js';

/**
 * Chains are numbered; per chain the offsets of its declaring line and of its rule lines (runs
 * of consecutive lines; nearly always one run), so the bulk of the text is never copied.
 */
export interface LightChains {
  readonly ids: Map<string, number>;
  readonly declStart: number[];
  readonly declEnd: number[];
  /** Offsets [start, end, start, end, …] of the runs of rule lines. */
  readonly spans: number[][];
}

export interface LightSet {
  readonly decl: string;
  /** Element key → element text (as written inside `{ … }`). */
  readonly elements: Map<string, string>;
}

export interface LightTable {
  readonly decls: string[];
  readonly chains: LightChains;
  readonly sets: Map<string, LightSet>;
}

export interface LightRuleset {
  readonly text: string;
  readonly tables: Map<string, LightTable>;
}

const CREATE = new Set(['add', 'create']);
const REMOVE = new Set(['delete', 'destroy']);

export class Unsupported extends Error {}

export function unsupported(): never {
  throw new Unsupported();
}

export const newTable = (): LightTable => ({
  decls: [], sets: new Map(),
  chains: { ids: new Map(), declStart: [], declEnd: [], spans: [] },
});

/** Index of the space ending the word at `from` (or `end`). */
export function wordEnd(text: string, from: number, end: number): number {
  const sp = text.indexOf(' ', from);
  return sp < 0 || sp > end ? end : sp;
}

/**
 * Replays the transaction. The common lines (rules, chain declarations and flushes of the table
 * last named) are told apart by comparing text in place; only chain names are copied.
 */
export function replay(text: string): LightRuleset {
  const rs: LightRuleset = { text, tables: new Map() };
  let rulePrefix = '\n';
  let spans: number[] = [];
  let t: LightTable | undefined;
  let tableKey = '\n';
  let pos = 0;
  while (pos < text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0) nl = text.length;
    const start = pos;
    pos = nl + 1;
    if (text.startsWith(rulePrefix, start)) {
      if (spans.length > 0 && spans[spans.length - 1] === start - 1) spans[spans.length - 1] = nl;
      else spans.push(start, nl);
      continue;
    }
    if (nl === start || text.charCodeAt(start) === 35 /* # */) continue;
    rulePrefix = '\n';
    const p1 = wordEnd(text, start, nl);
    const p2 = wordEnd(text, p1 + 1, nl);
    const p4 = wordEnd(text, wordEnd(text, p2 + 1, nl) + 1, nl);
    if (text.startsWith('table ', p1 + 1) || p4 >= nl) {
      if (!text.startsWith('table', p1 + 1)) unsupported();
      tableOp(rs.tables, text.slice(start, nl), text.slice(start, p1), text.slice(p2 + 1, p4));
      t = undefined;
      continue;
    }
    if (!t || p4 - p2 - 1 !== tableKey.length || !text.startsWith(tableKey, p2 + 1)) {
      tableKey = text.slice(p2 + 1, p4);
      t = rs.tables.get(tableKey) ?? unsupported();
    }
    const p5 = wordEnd(text, p4 + 1, nl);
    const name = text.slice(p4 + 1, p5);
    const object = text.slice(p1 + 1, p2);
    if (object === 'rule') {
      if (!text.startsWith('add ', start) || p5 >= nl || text.startsWith('index ', p5 + 1) ||
        text.startsWith('handle ', p5 + 1)) unsupported();
      const id = t.chains.ids.get(name) ?? unsupported();
      spans = t.chains.spans[id]!;
      spans.push(start, nl);
      rulePrefix = text.slice(start, p5 + 1);
    } else if (object === 'chain') chainOp(t.chains, text.slice(start, p1), name, start, nl);
    else if (object === 'set' || object === 'map') {
      setOp(t.sets, text.slice(start, p1), name, text.slice(start, nl));
    } else if (object === 'element') {
      elementOp(t.sets.get(name) ?? unsupported(), text.slice(start, p1), text.slice(p5 + 1, nl));
    } else unsupported();
  }
  return rs;
}

function tableOp(tables: Map<string, LightTable>, line: string, verb: string, key: string): void {
  if (CREATE.has(verb)) {
    const t = tables.get(key) ?? newTable();
    t.decls.push(line);
    tables.set(key, t);
  } else if (REMOVE.has(verb)) tables.delete(key);
  else if (verb === 'flush') {
    const t = tables.get(key) ?? unsupported();
    t.chains.spans.forEach((s) => { s.length = 0; });
    for (const s of t.sets.values()) s.elements.clear();
  } else unsupported();
}

function chainOp(c: LightChains, verb: string, name: string, start: number, end: number): void {
  const id = c.ids.get(name);
  if (CREATE.has(verb)) {
    if (id !== undefined) return;
    c.ids.set(name, c.declStart.length);
    c.declStart.push(start);
    c.declEnd.push(end);
    c.spans.push([]);
  } else if (verb === 'flush') c.spans[id ?? unsupported()]!.length = 0;
  else if (REMOVE.has(verb)) c.ids.delete(name);
  else unsupported();
}

function setOp(sets: Map<string, LightSet>, verb: string, name: string, line: string): void {
  if (CREATE.has(verb)) {
    if (!sets.has(name)) sets.set(name, { decl: line, elements: new Map() });
  } else if (verb === 'flush') (sets.get(name) ?? unsupported()).elements.clear();
  else if (REMOVE.has(verb)) sets.delete(name);
  else unsupported();
}

function elementOp(s: LightSet, verb: string, body: string): void {
  if (!body.startsWith('{ ') || !body.endsWith(' }')) unsupported();
  const inner = body.slice(2, -2);
  for (const e of inner.includes(',') ? splitTopLevel(inner) : [inner.trim()]) {
    // Plain keys (no quotes, one blank around each ` . `) are their own text.
    const colon = e.indexOf(' : ');
    const plain = !e.includes('"') && !e.includes('  ') && !e.includes('\t');
    const k = plain ? (colon < 0 ? e : e.slice(0, colon))
      : elementKey(parseElement(e, unsupported).key);
    if (CREATE.has(verb)) { if (!s.elements.has(k)) s.elements.set(k, e); }
    else if (REMOVE.has(verb)) s.elements.delete(k);
    else unsupported();
  }
}

function spanLength(s: readonly number[]): number {
  let n = 0;
  for (let i = 0; i < s.length; i += 2) n += s[i + 1]! - s[i]! + 1;
  return n;
}

/** The chain's rule lines as one text (newline-separated). */
export function rulesText(text: string, s: readonly number[]): string {
  if (s.length === 2) return text.slice(s[0], s[1]);
  const parts: string[] = [];
  for (let i = 0; i < s.length; i += 2) parts.push(text.slice(s[i], s[i + 1]));
  return parts.join('\n');
}

export function sameChain(a: LightRuleset, ta: LightTable, b: LightRuleset, tb: LightTable,
  name: string): boolean {
  const ia = ta.chains.ids.get(name)!;
  const ib = tb.chains.ids.get(name);
  if (ib === undefined) return false;
  const sa = ta.chains.spans[ia]!;
  const sb = tb.chains.spans[ib]!;
  if (spanLength(sa) !== spanLength(sb)) return false;
  const da = ta.chains.declEnd[ia]! - ta.chains.declStart[ia]!;
  if (da !== tb.chains.declEnd[ib]! - tb.chains.declStart[ib]! ||
    !b.text.startsWith(a.text.slice(ta.chains.declStart[ia], ta.chains.declEnd[ia]),
      tb.chains.declStart[ib])) return false;
  return rulesText(a.text, sa) === rulesText(b.text, sb);
}
