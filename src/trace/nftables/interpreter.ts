// Walks worlds through one netfilter hook of an nftables ruleset: every base chain on the hook
// (tables of the packet's family and `inet`) in priority order; jump/goto/return; verdict maps;
// `numgen random` branches forked with their probabilities.

import { canonicalIP } from '../../api/net.js';
import { endpointString } from '../packet.js';
import { forkWorld, type Hop, type HopOrigin, type World } from '../world.js';
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

export function runNftHook(tables: readonly NftTableIR[], hook: Hook, worlds: readonly World[], env: NftHookEnv): World[] {
  const h = hook.toLowerCase();
  let current = [...worlds];
  const fam = (w: World) => (w.pkt.dst.includes(':') ? 'ip6' : 'ip');
  const bases = tables.flatMap((t) => t.baseChains.filter((c) => c.hook === h).map((c) => ({ t, c })))
    .sort((a, b) => a.c.priority - b.c.priority);
  for (const { t, c } of bases) {
    const next: World[] = [];
    for (const w of current) {
      if ((w.verdict && w.verdict !== 'ACCEPT') || (t.family !== 'inet' && t.family !== fam(w))) {
        next.push(w);
        continue;
      }
      for (const o of runChain(t, c.name, w, env, 0)) {
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

function runChain(t: NftTableIR, chain: string, w: World, env: NftHookEnv, depth: number): Outcome[] {
  const c = t.chains.get(chain);
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

function ctx(t: NftTableIR, w: World, env: NftHookEnv): EvalContext {
  const states = new Set(['new']);
  if (w.dnat) states.add('dnat');
  if (w.snat) states.add('snat');
  return {
    pkt: w.pkt, mark: w.mark, ctstates: states, inIface: env.inIface, outIface: env.outIface, isLocal: env.isLocal,
    setElements: (name) => t.sets.get(name) ?? [],
  };
}

/** Runs a rule's statements on `x` from statement `from`; pushes to `next` (rule fell through
 *  or did not match) or `results` (verdict reached). */
function runRule(
  t: NftTableIR, rule: CompiledNftRule, x: World, env: NftHookEnv, depth: number,
  next: World[], results: Outcome[], from = 0,
): void {
  const hop = (extra: Partial<Hop> = {}): Hop => ({
    where: env.where, stage: `${t.key} ${rule.chain}`, chain: rule.chain, rule: rule.index,
    text: rule.comment ? `${rule.text} comment "${rule.comment}"` : rule.text, origin: env.origin(rule.chain), ...extra,
  });
  for (let s = from; s < rule.stmts.length; s++) {
    const st = rule.stmts[s]!;
    const c = ctx(t, x, env);
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
          x.hops.push(hop());
          return verdict(t, branches[0]!.v, x, env, depth, next, results);
        }
        for (const b of branches) {
          const y = forkWorld(x, x.probability * b.p);
          y.hops.push(hop());
          verdict(t, b.v, y, env, depth, next, results);
        }
        if (missing > 1e-12) next.push(forkWorld(x, x.probability * missing));
        return;
      }
      case 'verdict':
        x.hops.push(hop());
        return verdict(t, st.verdict, x, env, depth, next, results, () => runRule(t, rule, x, env, depth, next, results, s + 1));
      case 'mark':
        x.mark = st.op === 'or' ? (x.mark | st.value) >>> 0 : st.op === 'xor' ? (x.mark ^ st.value) >>> 0
          : st.op === 'and' ? (x.mark & st.value) >>> 0 : st.value;
        break;
      case 'update-set':
        break;
      case 'dnat': {
        const before = endpointString(x.pkt.dst, x.pkt.dport);
        x.pkt = { ...x.pkt, dst: st.ip, dport: st.port ?? x.pkt.dport };
        x.dnat = true;
        x.hops.push(hop({ nat: `DNAT ${before} → ${endpointString(x.pkt.dst, x.pkt.dport)}` }));
        results.push({ w: x, end: 'accept' });
        return;
      }
      case 'masquerade':
      case 'snat': {
        const to = st.kind === 'snat' ? st.ip : env.masqueradeAddress ?? x.pkt.src;
        x.hops.push(hop({ nat: `${st.kind === 'snat' ? 'SNAT' : 'MASQUERADE'} src ${x.pkt.src} → ${to}` }));
        x.pkt = { ...x.pkt, src: to };
        x.snat = true;
        x.masquerade = true;
        results.push({ w: x, end: 'accept' });
        return;
      }
    }
  }
  x.hops.push(hop());
  next.push(x);
}

function verdict(
  t: NftTableIR, v: Verdict, x: World, env: NftHookEnv, depth: number, next: World[], results: Outcome[],
  cont?: () => void,
): void {
  switch (v.kind) {
    case 'accept': results.push({ w: x, end: 'accept' }); return;
    case 'drop': x.verdict = 'DROP'; results.push({ w: x, end: 'terminal' }); return;
    case 'reject': x.verdict = 'REJECT'; results.push({ w: x, end: 'terminal' }); return;
    case 'return': results.push({ w: x, end: 'return' }); return;
    case 'continue': (cont ? cont() : next.push(x)); return;
    case 'jump':
    case 'goto':
      for (const o of runChain(t, v.chain, x, env, depth + 1)) {
        if (o.end !== 'return') results.push(o);
        else if (v.kind === 'goto') results.push(o);
        else next.push(o.w);
      }
  }
}

function evalExpr(e: Expr, c: EvalContext): { parts: (string | number | undefined)[]; names: string[] } {
  if (e.kind === 'concat') {
    const parts = e.parts.map((p) => evalExpr(p, c));
    return { parts: parts.flatMap((p) => p.parts), names: parts.flatMap((p) => p.names) };
  }
  if (e.kind === 'numgen') return { parts: [undefined], names: ['numgen'] };
  return { parts: [e.get(c)], names: [e.name] };
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
  const hit = idx.exact.get(parts.map(String).join(' . '));
  return hit ?? idx.rest.find((e) => keyMatches(e.key, parts, names, c));
}

function matches(t: NftTableIR, st: Extract<Stmt, { kind: 'match' }>, c: EvalContext): boolean {
  const { parts, names } = evalExpr(st.expr, c);
  let hit: boolean;
  if (st.mask !== undefined) {
    const v = ((Number(parts[0] ?? 0) & st.mask) >>> 0);
    hit = elementsOf(st.value, c).some((e) => Number(e.key[0]) === v);
  } else if (parts.some((p, i) => p === undefined && names[i] !== 'ct state')) {
    // A payload of another protocol/family never matches, negated or not (as in the kernel).
    return false;
  } else {
    hit = findElement(t, st.value, parts, names, c) !== undefined;
  }
  return st.negate ? !hit : hit;
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
      const v = parseVerdict(el.value);
      if (v && k >= 0 && k < e.mod) out.push({ v, p: 1 / e.mod });
    }
    return out;
  }
  const { parts, names } = evalExpr(e, c);
  if (parts.some((p) => p === undefined)) return [];
  const hit = findElement(t, map, parts, names, c);
  const v = parseVerdict(hit?.value);
  return v ? [{ v, p: 1 }] : [];
}
