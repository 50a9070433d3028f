// Walks worlds through one netfilter hook of an nftables ruleset: every base chain on the hook
// (tables of the packet's family and `inet`) in priority order; jump/goto/return; verdict maps;
// `numgen random` branches forked with their probabilities.

import { canonicalIP } from '../../api/net.js';
import { endpointString, withDst, withSrc } from '../packet.js';
import { forkWorld, isRecording, type Hop, type HopOrigin, type World } from '../world.js';
import type { Hook } from '../iptables/interpreter.js';
import { partMatches, type CompiledNftRule, type EvalContext, type Expr, type Stmt, type ValueRef, type Verdict } from './compile.js';

export interface NftChainIR {
  readonly table: string;
  readonly name: string;
  readonly hook?: string;
  readonly type?: string;
  readonly priority: number;
  readonly policy: string;
  readonly rules: readonly CompiledNftRule[];
}

type Element = { readonly key: readonly string[]; readonly value?: readonly string[] };

export interface NftTableIR {
  /** `ip kube-proxy` */
  readonly key: string;
  readonly family: string;
  readonly chains: ReadonlyMap<string, NftChainIR>;
  readonly sets: ReadonlyMap<string, readonly Element[]>;
  /** Lookup indexes built on first use, per set and key layout (the hot path of big tables). */
  readonly indexes: Map<string, SetIndex>;
  /** The base chains (those with a hook), found once. */
  readonly baseChains: readonly NftChainIR[];
  /** Verdicts of map elements, parsed on first use (keyed by the element's value words). */
  readonly verdicts: WeakMap<readonly string[], Verdict | null>;
  /** `sets` as EvalContext reads them (made once: contexts are made per rule). */
  readonly setElements: EvalContext['setElements'];
}

interface SetIndex {
  readonly exact: Map<string, Element>;
  /** Elements with ranges or prefixes: matched one by one. */
  readonly rest: readonly Element[];
}

export interface NftHookEnv {
  readonly where: string;
  isLocal(ip: string): boolean;
  readonly inIface?: string;
  readonly outIface?: string;
  readonly masqueradeAddress?: string;
  origin(chain: string): HopOrigin | undefined;
}

type End = 'accept' | 'return' | 'terminal';
interface Outcome { readonly w: World; readonly end: End }

export type HookBases = readonly { readonly t: NftTableIR; readonly c: NftChainIR }[];

/** The base chains on a hook across tables, in priority order (callers may keep the answer). */
export function hookBases(tables: readonly NftTableIR[], hook: Hook): HookBases {
  const h = hook.toLowerCase();
  return tables.flatMap((t) => t.baseChains.filter((c) => c.hook === h).map((c) => ({ t, c })))
    .sort((a, b) => a.c.priority - b.c.priority);
}

export function runNftHook(
  tables: readonly NftTableIR[], hook: Hook, worlds: readonly World[], env: NftHookEnv,
  bases: HookBases = hookBases(tables, hook),
): World[] {
  let current = [...worlds];
  for (const { t, c } of bases) {
    const next: World[] = [];
    for (const w of current) {
      if ((w.verdict && w.verdict !== 'ACCEPT') || (t.family !== 'inet' && t.family !== familyOf(w))) {
        next.push(w);
        continue;
      }
      for (const o of runChain(t, c, w, env, 0)) {
        if (o.end === 'return' && c.policy === 'drop') {
          o.w.verdict = 'DROP';
          o.w.hops.push({ where: env.where, stage: `${t.key} ${c.name}`, chain: c.name, text: 'policy drop' });
        }
        next.push(o.w);
      }
    }
    current = next;
  }
  return current;
}

function runChain(
  t: NftTableIR, c: NftChainIR | undefined, w: World, env: NftHookEnv, depth: number,
): Outcome[] {
  if (!c || depth > 64) return [{ w, end: 'return' }];
  const results: Outcome[] = [];
  let active = [w];
  for (const rule of c.rules) {
    const next: World[] = [];
    for (const x of active) runRule(t, rule, x, env, depth, next, results);
    active = next;
    if (active.length === 0) break;
  }
  for (const x of active) results.push({ w: x, end: 'return' });
  return results;
}

const CT_NEW: ReadonlySet<string> = new Set(['new']);
const CT_DNAT: ReadonlySet<string> = new Set(['new', 'dnat']);
const CT_SNAT: ReadonlySet<string> = new Set(['new', 'snat']);
const CT_BOTH: ReadonlySet<string> = new Set(['new', 'dnat', 'snat']);

function familyOf(w: World): string {
  return w.pkt.dst.includes(':') ? 'ip6' : 'ip';
}

/** What the rule's expressions read; made again after a statement changes the world. */
function ctx(t: NftTableIR, w: World, env: NftHookEnv): EvalContext {
  const states = w.dnat ? (w.snat ? CT_BOTH : CT_DNAT) : (w.snat ? CT_SNAT : CT_NEW);
  return {
    pkt: w.pkt, mark: w.mark, ctstates: states, inIface: env.inIface, outIface: env.outIface, isLocal: env.isLocal,
    setElements: t.setElements,
  };
}

/** Runs a rule's statements on `x` from statement `from`; pushes to `next` (rule fell through
 *  or did not match) or `results` (verdict reached). */
function runRule(
  t: NftTableIR, rule: CompiledNftRule, x: World, env: NftHookEnv, depth: number,
  next: World[], results: Outcome[], from = 0,
): void {
  const recording = isRecording(x);
  let c = ctx(t, x, env);
  for (let s = from; s < rule.stmts.length; s++) {
    const st = rule.stmts[s]!;
    switch (st.kind) {
      case 'match':
        if (!matches(t, st, c)) {
          next.push(x);
          return;
        }
        break;
      case 'vmap': {
        const branches = lookupVmap(t, st.expr, st.map, c);
        const missing = 1 - branches.reduce((a, b) => a + b.p, 0);
        if (branches.length === 1 && branches[0]!.p === 1) {
          if (recording) x.hops.push(ruleHop(t, rule, env));
          return verdict(t, branches[0]!.v, x, env, depth, next, results);
        }
        for (const b of branches) {
          const y = forkWorld(x, x.probability * b.p);
          if (recording) y.hops.push(ruleHop(t, rule, env));
          verdict(t, b.v, y, env, depth, next, results);
        }
        if (missing > 1e-12) next.push(forkWorld(x, x.probability * missing));
        return;
      }
      case 'verdict':
        if (recording) x.hops.push(ruleHop(t, rule, env));
        if (st.verdict.kind === 'continue') return runRule(t, rule, x, env, depth, next, results, s + 1);
        return verdict(t, st.verdict, x, env, depth, next, results);
      case 'mark':
        x.mark = st.op === 'or' ? (x.mark | st.value) >>> 0 : st.op === 'xor' ? (x.mark ^ st.value) >>> 0
          : st.op === 'and' ? (x.mark & st.value) >>> 0 : st.value;
        c = ctx(t, x, env);
        break;
      case 'update-set':
        break;
      case 'dnat': {
        const before = x.pkt;
        x.pkt = withDst(before, st.ip, st.port ?? before.dport);
        x.dnat = true;
        if (recording) {
          const from = endpointString(before.dst, before.dport);
          x.hops.push({ ...ruleHop(t, rule, env), nat: `DNAT ${from} → ${endpointString(x.pkt.dst, x.pkt.dport)}` });
        }
        results.push({ w: x, end: 'accept' });
        return;
      }
      case 'masquerade':
      case 'snat': {
        const to = st.kind === 'snat' ? st.ip : env.masqueradeAddress ?? x.pkt.src;
        if (recording) x.hops.push({ ...ruleHop(t, rule, env), nat: `${st.kind === 'snat' ? 'SNAT' : 'MASQUERADE'} src ${x.pkt.src} → ${to}` });
        const p0 = x.pkt;
        x.pkt = withSrc(p0, to);
        x.snat = true;
        x.masquerade = true;
        results.push({ w: x, end: 'accept' });
        return;
      }
    }
  }
  if (recording) x.hops.push(ruleHop(t, rule, env));
  next.push(x);
}

function ruleHop(t: NftTableIR, rule: CompiledNftRule, env: NftHookEnv): Hop {
  return {
    where: env.where, stage: `${t.key} ${rule.chain}`, chain: rule.chain, rule: rule.index,
    text: rule.comment ? `${rule.text} comment "${rule.comment}"` : rule.text,
    origin: env.origin(rule.chain),
  };
}

function verdict(
  t: NftTableIR, v: Verdict, x: World, env: NftHookEnv, depth: number, next: World[], results: Outcome[],
): void {
  switch (v.kind) {
    case 'accept': results.push({ w: x, end: 'accept' }); return;
    case 'drop': x.verdict = 'DROP'; results.push({ w: x, end: 'terminal' }); return;
    case 'reject': x.verdict = 'REJECT'; results.push({ w: x, end: 'terminal' }); return;
    case 'return': results.push({ w: x, end: 'return' }); return;
    // A `continue` statement resumes its rule (runRule); a map's `continue` ends the rule.
    case 'continue': next.push(x); return;
    case 'jump':
    case 'goto':
      for (const o of runChain(t, v.ref ?? t.chains.get(v.chain), x, env, depth + 1)) {
        if (o.end !== 'return') results.push(o);
        else if (v.kind === 'goto') results.push(o);
        else next.push(o.w);
      }
  }
}

type Part = string | number | undefined;
const NUMGEN_NAMES: readonly string[] = ['numgen'];

function evalExpr(e: Expr, c: EvalContext): { parts: Part[]; names: readonly string[] } {
  if (e.kind === 'concat') {
    const parts: Part[] = [];
    for (const p of e.parts) parts.push(...evalExpr(p, c).parts);
    return { parts, names: e.names };
  }
  if (e.kind === 'numgen') return { parts: [undefined], names: NUMGEN_NAMES };
  return { parts: [e.get(c)], names: e.names };
}

function elementsOf(v: ValueRef, c: EvalContext): readonly { key: readonly string[]; value?: readonly string[] }[] {
  if (v.kind === 'named') return c.setElements(v.name);
  if (v.kind === 'anon') return v.elements;
  return [{ key: v.parts }];
}

function keyMatches(key: readonly string[], parts: readonly (string | number | undefined)[], names: readonly string[], c: EvalContext): boolean {
  if (key.length !== parts.length) return false;
  return key.every((k, i) => names[i] === 'ct state'
    ? c.ctstates.has(k.toLowerCase())
    : partMatches(k, parts[i], names[i]!));
}

const PROTO_NAMES: Record<string, string> = { '6': 'tcp', '17': 'udp', '132': 'sctp', '1': 'icmp', '58': 'icmp' };

/** An element part in the form the packet's value of that field takes; undefined if inexact. */
function exactPart(p: string, name: string): string | undefined {
  if (name.endsWith('addr')) return p.includes('/') || p.includes('-') ? undefined : canonicalIP(p);
  if (name === 'meta l4proto') return PROTO_NAMES[p] ?? p;
  if (name.endsWith('port')) return /^\d+$/.test(p) ? String(Number(p)) : undefined;
  return name === 'ct state' ? undefined : p;
}

function setIndex(t: NftTableIR, set: string, names: readonly string[]): SetIndex {
  const key = `${set}|${names.join(',')}`;
  let idx = t.indexes.get(key);
  if (!idx) {
    const exact = new Map<string, Element>();
    const rest: Element[] = [];
    for (const e of t.sets.get(set) ?? []) {
      const parts = e.key.map((p, i) => exactPart(p, names[i] ?? ''));
      if (parts.length === names.length && parts.every((p) => p !== undefined)) exact.set(parts.join(' . '), e);
      else rest.push(e);
    }
    idx = { exact, rest };
    t.indexes.set(key, idx);
  }
  return idx;
}

/** The element of `v` matching the packet's values, if any. */
function findElement(
  t: NftTableIR, v: ValueRef, parts: readonly (string | number | undefined)[], names: readonly string[], c: EvalContext,
): Element | undefined {
  if (v.kind !== 'named' || names.includes('ct state')) {
    return elementsOf(v, c).find((e) => keyMatches(e.key, parts, names, c));
  }
  const idx = setIndex(t, v.name, names);
  let key = String(parts[0]);
  for (let i = 1; i < parts.length; i++) key += ` . ${String(parts[i])}`;
  const hit = idx.exact.get(key);
  return hit ?? idx.rest.find((e) => keyMatches(e.key, parts, names, c));
}

function hasMissingPayload(parts: readonly Part[], names: readonly string[]): boolean {
  for (let i = 0; i < parts.length; i++) if (parts[i] === undefined && names[i] !== 'ct state') return true;
  return false;
}

function matches(t: NftTableIR, st: Extract<Stmt, { kind: 'match' }>, c: EvalContext): boolean {
  const { parts, names } = evalExpr(st.expr, c);
  let hit: boolean;
  if (st.mask !== undefined) {
    const v = ((Number(parts[0] ?? 0) & st.mask) >>> 0);
    hit = elementsOf(st.value, c).some((e) => Number(e.key[0]) === v);
  } else if (hasMissingPayload(parts, names)) {
    // A payload of another protocol/family never matches, negated or not (as in the kernel).
    return false;
  } else {
    hit = findElement(t, st.value, parts, names, c) !== undefined;
  }
  return st.negate ? !hit : hit;
}

function elementVerdict(t: NftTableIR, words: readonly string[] | undefined): Verdict | undefined {
  if (!words) return undefined;
  const known = t.verdicts.get(words);
  if (known !== undefined) return known ?? undefined;
  const v = parseVerdict(words);
  if (v?.kind === 'jump' || v?.kind === 'goto') v.ref = t.chains.get(v.chain);
  t.verdicts.set(words, v ?? null);
  return v;
}

function parseVerdict(words: readonly string[] | undefined): Verdict | undefined {
  if (!words || words.length === 0) return undefined;
  const [w, chain] = words.flatMap((x) => x.split(/\s+/));
  if (w === 'goto' || w === 'jump') return { kind: w, chain: chain! };
  if (w === 'accept' || w === 'drop' || w === 'return' || w === 'continue' || w === 'reject') return { kind: w };
  return undefined;
}

function lookupVmap(t: NftTableIR, e: Expr, map: ValueRef, c: EvalContext): { v: Verdict; p: number }[] {
  const elements = elementsOf(map, c);
  if (e.kind === 'numgen') {
    const out: { v: Verdict; p: number }[] = [];
    for (const el of elements) {
      const k = Number(el.key[0]) - e.offset;
      const v = elementVerdict(t, el.value);
      if (v && k >= 0 && k < e.mod) out.push({ v, p: 1 / e.mod });
    }
    return out;
  }
  const { parts, names } = evalExpr(e, c);
  if (parts.includes(undefined)) return [];
  const hit = findElement(t, map, parts, names, c);
  const v = elementVerdict(t, hit?.value);
  return v ? [{ v, p: 1 }] : [];
}
