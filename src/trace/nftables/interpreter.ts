// Walks worlds through one netfilter hook of an nftables ruleset: every base chain on the hook
// (tables of the packet's family and `inet`) in priority order; jump/goto/return; verdict maps;
// `numgen random` branches forked with their probabilities.
//
// Match and map statements are compiled on first use into closures over the world (sets
// indexed, literals and anonymous sets parsed once); a chain's outcomes go straight to lists
// its caller passes in, as in the iptables interpreter (see there).

import { canonicalIP } from '../../api/net.js';
import { endpointString, withDst, withSrc } from '../packet.js';
import { forkWorld, isRecording, type Hop, type HopOrigin, type World } from '../world.js';
import type { Hook } from '../iptables/interpreter.js';
import {
  compilePart, exprNames, FastMatch, type CompiledNftRule, type Expr, type FieldEnv, type Part, type Stmt,
  type ValueRef, type Verdict,
} from './compile.js';

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
  /** The elements of a named set or map (none for an unknown name). */
  readonly setElements: (name: string) => readonly Element[];
}

interface SetIndex {
  readonly exact: Map<string, Element>;
  /** Elements with ranges or prefixes: matched one by one. */
  readonly rest: readonly Element[];
}

export interface NftHookEnv extends FieldEnv {
  readonly where: string;
  readonly masqueradeAddress?: string;
  origin(chain: string): HopOrigin | undefined;
}

export type HookBases = readonly { readonly t: NftTableIR; readonly c: NftChainIR }[];

/** The base chains on a hook across tables, in priority order (callers may keep the answer). */
export function hookBases(tables: readonly NftTableIR[], hook: Hook): HookBases {
  const h = hook.toLowerCase();
  return tables.flatMap((t) => t.baseChains.filter((c) => c.hook === h).map((c) => ({ t, c })))
    .sort((a, b) => a.c.priority - b.c.priority);
}

/** Where a chain's outcomes go: ended worlds to `res`, returned ones to `ret`; `drop` is the
 *  base chain when its policy drops what returns from it. */
interface Sinks {
  readonly res: World[];
  readonly ret: World[];
  readonly drop: NftChainIR | null;
}

export function runNftHook(
  tables: readonly NftTableIR[], hook: Hook, worlds: readonly World[], env: NftHookEnv,
  bases: HookBases = hookBases(tables, hook),
): World[] {
  let current = [...worlds];
  for (const { t, c } of bases) {
    const next: World[] = [];
    const sinks: Sinks = { res: next, ret: next, drop: c.policy === 'drop' ? c : null };
    for (const w of current) {
      if ((w.verdict && w.verdict !== 'ACCEPT') || (t.family !== 'inet' && t.family !== familyOf(w))) {
        next.push(w);
        continue;
      }
      runChain(t, c, w, env, 0, sinks);
    }
    current = next;
  }
  return current;
}

function returned(t: NftTableIR, w: World, env: NftHookEnv, out: Sinks): void {
  const c = out.drop;
  if (c) {
    w.verdict = 'DROP';
    w.hops.push({ where: env.where, stage: `${t.key} ${c.name}`, chain: c.name, text: 'policy drop' });
  }
  out.ret.push(w);
}

function runChain(
  t: NftTableIR, c: NftChainIR | undefined, w: World, env: NftHookEnv, depth: number, out: Sinks,
): void {
  if (!c || depth > 64) return returned(t, w, env, out);
  const rules = c.rules;
  // One world at a time until a rule leaves more than one (a random branch); then breadth-first.
  let next: World[] = [];
  let x = w;
  let r = 0;
  for (; r < rules.length; r++) {
    runRule(t, rules[r]!, x, env, depth, next, out, 0);
    if (next.length !== 1) break;
    x = next.pop()!;
  }
  if (r === rules.length) return returned(t, x, env, out);
  let active = next;
  for (r++; r < rules.length && active.length > 0; r++) {
    next = [];
    for (const y of active) runRule(t, rules[r]!, y, env, depth, next, out, 0);
    active = next;
  }
  for (const y of active) returned(t, y, env, out);
}

function familyOf(w: World): string {
  return w.pkt.dst.includes(':') ? 'ip6' : 'ip';
}

/** Runs a rule's statements on `x` from statement `from`; pushes to `next` (rule fell through
 *  or did not match) or the sinks (verdict reached). */
function runRule(
  t: NftTableIR, rule: CompiledNftRule, x: World, env: NftHookEnv, depth: number,
  next: World[], out: Sinks, from: number,
): void {
  const recording = isRecording(x);
  const stmts = rule.stmts;
  for (let s = from; s < stmts.length; s++) {
    const st = stmts[s]!;
    switch (st.kind) {
      case 'match':
        if (!(st.fast !== FastMatch.None ? fastMatches(st.fast, st.fastText, st.negate, x)
          : compiledMatch(t, st)(x, env))) {
          next.push(x);
          return;
        }
        break;
      case 'vmap':
        return runVmap(t, rule, st, x, env, depth, next, out);
      case 'verdict':
        if (recording) x.hops.push(ruleHop(t, rule, env));
        if (st.verdict.kind === 'continue') return runRule(t, rule, x, env, depth, next, out, s + 1);
        return verdict(t, st.verdict, x, env, depth, next, out);
      case 'mark':
        x.mark = st.op === 'or' ? (x.mark | st.value) >>> 0 : st.op === 'xor' ? (x.mark ^ st.value) >>> 0
          : st.op === 'and' ? (x.mark & st.value) >>> 0 : st.value;
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
        out.res.push(x);
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
        out.res.push(x);
        return;
      }
    }
  }
  if (recording) x.hops.push(ruleHop(t, rule, env));
  next.push(x);
}

/** A FastMatch on world `x` (a payload of the other family never matches, negated or not). */
function fastMatches(op: FastMatch, text: string | undefined, negate: boolean, x: World): boolean {
  let hit: boolean;
  switch (op) {
    case FastMatch.IpSaddr: case FastMatch.IpDaddr: case FastMatch.Ip6Saddr: case FastMatch.Ip6Daddr: {
      const v6 = op === FastMatch.Ip6Saddr || op === FastMatch.Ip6Daddr;
      if (x.pkt.src.includes(':') !== v6) return false;
      hit = (op === FastMatch.IpSaddr || op === FastMatch.Ip6Saddr ? x.pkt.src : x.pkt.dst) === text;
      break;
    }
    case FastMatch.L4proto: hit = x.pkt.proto === text; break;
    case FastMatch.CtTrue: hit = true; break;
    case FastMatch.CtDnat: hit = x.dnat; break;
    case FastMatch.CtSnat: hit = x.snat; break;
    default: hit = false;
  }
  return negate ? !hit : hit;
}

type VmapStmt = Extract<Stmt, { kind: 'vmap' }>;

function runVmap(
  t: NftTableIR, rule: CompiledNftRule, st: VmapStmt, x: World, env: NftHookEnv, depth: number,
  next: World[], out: Sinks,
): void {
  const m = compiledVmap(t, st);
  if (m.kind === 'keyed') {
    const v = m.lookup(x, env);
    // No element: the rule ends and the world goes on unchanged.
    if (v === undefined) {
      next.push(x);
      return;
    }
    if (isRecording(x)) x.hops.push(ruleHop(t, rule, env));
    return verdict(t, v, x, env, depth, next, out);
  }
  const branches = m.branches();
  if (branches.length === 1 && branches[0]!.p === 1) {
    if (isRecording(x)) x.hops.push(ruleHop(t, rule, env));
    return verdict(t, branches[0]!.v, x, env, depth, next, out);
  }
  for (const b of branches) {
    const y = forkWorld(x, x.probability * b.p);
    if (isRecording(y)) y.hops.push(ruleHop(t, rule, env));
    verdict(t, b.v, y, env, depth, next, out);
  }
  const missing = m.missing();
  if (missing > 1e-12) next.push(forkWorld(x, x.probability * missing));
}

function ruleHop(t: NftTableIR, rule: CompiledNftRule, env: NftHookEnv): Hop {
  return {
    where: env.where, stage: `${t.key} ${rule.chain}`, chain: rule.chain, rule: rule.index,
    text: rule.comment ? `${rule.text} comment "${rule.comment}"` : rule.text,
    origin: env.origin(rule.chain),
  };
}

function verdict(t: NftTableIR, v: Verdict, x: World, env: NftHookEnv, depth: number, next: World[], out: Sinks): void {
  switch (v.kind) {
    case 'accept': out.res.push(x); return;
    case 'drop': x.verdict = 'DROP'; out.res.push(x); return;
    case 'reject': x.verdict = 'REJECT'; out.res.push(x); return;
    case 'return': returned(t, x, env, out); return;
    // A `continue` statement resumes its rule (runRule); a map's `continue` ends the rule.
    case 'continue': next.push(x); return;
    case 'goto':
      // A goto's returns are the caller's.
      runChain(t, v.ref ?? t.chains.get(v.chain), x, env, depth + 1, out);
      return;
    case 'jump':
      runChain(t, v.ref ?? t.chains.get(v.chain), x, env, depth + 1, { res: out.res, ret: next, drop: null });
  }
}

// ---- compiled statements ----------------------------------------------------------------

type Test = (w: World, env: NftHookEnv) => boolean;
type PartTest = (actual: Part, w: World) => boolean;

type CompiledVmap =
  | { readonly kind: 'keyed'; lookup(w: World, env: NftHookEnv): Verdict | undefined }
  | { readonly kind: 'numgen'; branches(): readonly { v: Verdict; p: number }[]; missing(): number };

/** Compiled forms, per table (a statement object belongs to one table's rule). */
const compiledTests = new WeakMap<Stmt, Test>();
const compiledVmaps = new WeakMap<Stmt, CompiledVmap>();

function compiledMatch(t: NftTableIR, st: Extract<Stmt, { kind: 'match' }>): Test {
  const s = st as { compiled?: Test };
  return (s.compiled ??= compileMatch(t, st));
}

function compiledVmap(t: NftTableIR, st: VmapStmt): CompiledVmap {
  const s = st as { compiled?: CompiledVmap };
  return (s.compiled ??= compileVmap(t, st));
}

/** The getters of an expression's parts, flattened (numgen yields nothing to match on). */
function partGetters(e: Expr): ((w: World, env: FieldEnv) => Part)[] {
  if (e.kind === 'concat') return e.parts.flatMap(partGetters);
  if (e.kind === 'numgen') return [() => undefined];
  return [e.get];
}

function evalParts(getters: readonly ((w: World, env: FieldEnv) => Part)[], w: World, env: FieldEnv): Part[] {
  const parts: Part[] = new Array(getters.length);
  for (let i = 0; i < getters.length; i++) parts[i] = getters[i]!(w, env);
  return parts;
}

function elementsOf(t: NftTableIR, v: ValueRef): readonly Element[] {
  if (v.kind === 'named') return t.setElements(v.name);
  if (v.kind === 'anon') return v.elements;
  return [{ key: v.parts }];
}

/** An element's key against the packet's parts (same length, every part matching). */
function keyTest(
  key: readonly string[], names: readonly string[],
): (parts: readonly Part[], w: World) => boolean {
  // Parts always number as many as the names: a key of another length never matches.
  if (key.length !== names.length) return () => false;
  const tests: PartTest[] = key.map((k, i) => compilePart(k, names[i]!));
  const n = key.length;
  return (parts, w) => {
    if (parts.length !== n) return false;
    for (let i = 0; i < n; i++) if (!tests[i]!(parts[i], w)) return false;
    return true;
  };
}

/** The first element of `v` whose key matches the parts: by index for named sets (exact keys),
 *  else one by one. Compiled once per statement. */
function elementFinder(
  t: NftTableIR, v: ValueRef, names: readonly string[],
): (parts: readonly Part[], w: World) => Element | undefined {
  const linear = (els: readonly Element[]) => {
    const tests = els.map((e) => keyTest(e.key, names));
    return (parts: readonly Part[], w: World) => {
      for (let i = 0; i < els.length; i++) if (tests[i]!(parts, w)) return els[i];
      return undefined;
    };
  };
  if (v.kind !== 'named' || names.includes('ct state')) return linear(elementsOf(t, v));
  const idx = setIndex(t, v.name, names);
  const rest = linear(idx.rest);
  return (parts, w) => {
    let key = String(parts[0]);
    for (let i = 1; i < parts.length; i++) key += ` . ${String(parts[i])}`;
    return idx.exact.get(key) ?? rest(parts, w);
  };
}

function compileMatch(t: NftTableIR, st: Extract<Stmt, { kind: 'match' }>): Test {
  const names = exprNames(st.expr);
  const getters = partGetters(st.expr);
  const negate = st.negate;
  if (st.mask !== undefined) {
    const mask = st.mask;
    const wanted = elementsOf(t, st.value).map((e) => Number(e.key[0]));
    const first = getters[0]!;
    return (w, env) => {
      const v = ((Number(first(w, env) ?? 0) & mask) >>> 0);
      const hit = wanted.includes(v);
      return negate ? !hit : hit;
    };
  }
  // A payload of another protocol/family never matches, negated or not (as in the kernel).
  const payload = names.map((n) => n !== 'ct state');
  const find = elementFinder(t, st.value, names);
  if (getters.length === 1) {
    const get = getters[0]!;
    const isPayload = payload[0]!;
    const one: Part[] = [undefined];
    return (w, env) => {
      const v = get(w, env);
      if (v === undefined && isPayload) return false;
      one[0] = v;
      const hit = find(one, w) !== undefined;
      return negate ? !hit : hit;
    };
  }
  return (w, env) => {
    const parts = evalParts(getters, w, env);
    for (let i = 0; i < parts.length; i++) if (parts[i] === undefined && payload[i]) return false;
    const hit = find(parts, w) !== undefined;
    return negate ? !hit : hit;
  };
}

function compileVmap(t: NftTableIR, st: VmapStmt): CompiledVmap {
  const e = st.expr;
  if (e.kind === 'numgen') {
    let branches: { v: Verdict; p: number }[] | undefined;
    const all = () => {
      if (!branches) {
        branches = [];
        for (const el of elementsOf(t, st.map)) {
          const k = Number(el.key[0]) - e.offset;
          const v = elementVerdict(t, el.value);
          if (v && k >= 0 && k < e.mod) branches.push({ v, p: 1 / e.mod });
        }
      }
      return branches;
    };
    let missing: number | undefined;
    return { kind: 'numgen', branches: all, missing: () => (missing ??= 1 - all().reduce((a, b) => a + b.p, 0)) };
  }
  // An empty map (kube-proxy keeps several, e.g. no-endpoint-services) has no verdict for any
  // packet; reading the packet has no effects, so there is nothing to evaluate.
  if (elementsOf(t, st.map).length === 0) return { kind: 'keyed', lookup: () => undefined };
  const names = exprNames(e);
  const getters = partGetters(e);
  const find = elementFinder(t, st.map, names);
  return {
    kind: 'keyed',
    lookup(w, env) {
      const parts = evalParts(getters, w, env);
      if (parts.includes(undefined)) return undefined;
      return elementVerdict(t, find(parts, w)?.value);
    },
  };
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
