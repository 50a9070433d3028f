// Walks worlds through one netfilter hook of an iptables table set: tables in priority order
// (raw, mangle, nat, filter), chains with jumps, gotos and returns, random branches forked.
// First packet of a connection only: ctstate NEW (+DNAT/SNAT once applied); `recent` affinity
// lists are empty (a fresh client).

import { endpointString, withDst, withSrc } from '../packet.js';
import { forkWorld, isRecording, type Hop, type HopOrigin, type World } from '../world.js';

/** Stands in for hop records when a world keeps none. */
const NO_HOP: Hop = { where: '', stage: '', text: '' };
import type { CompiledRule, MatchEnv } from './rule.js';
import { flatMatches } from './flat-match.js';
import type { TraceChain, TraceTables } from './ruleset.js';

export type Hook = 'PREROUTING' | 'INPUT' | 'FORWARD' | 'OUTPUT' | 'POSTROUTING';

const TABLE_ORDER: Record<Hook, readonly string[]> = {
  PREROUTING: ['raw', 'mangle', 'nat'],
  INPUT: ['mangle', 'nat', 'filter'],
  FORWARD: ['mangle', 'filter'],
  OUTPUT: ['raw', 'mangle', 'nat', 'filter'],
  POSTROUTING: ['mangle', 'nat'],
};

export interface HookEnv extends MatchEnv {
  /** Node name for the hops. */
  readonly where: string;
  /** Source address MASQUERADE picks (the out interface's address). */
  readonly masqueradeAddress?: string;
  origin(chain: string, rule: CompiledRule): HopOrigin | undefined;
}

const MAX_DEPTH = 64;

/**
 * Runs the hook's tables in priority order (or only `only`, for callers that interleave).
 *
 * A chain's outcomes go straight to two lists its caller passes in, in the order they happen:
 * worlds that ended (a verdict, a NAT target, or a `goto` into a chain that ended) to `res`,
 * worlds that returned to `ret`. A `-j` caller takes the returns as its own active worlds; the
 * base chain's caller passes one list for both. Rules run breadth-first over a chain's active
 * worlds (every world tries rule r before any tries rule r+1), which fixes the order of the
 * outcomes; while a chain holds a single world (no random branch yet) it runs without lists.
 */
export function runHook(
  tables: TraceTables, hook: Hook, worlds: readonly World[], env: HookEnv, only?: readonly string[],
): World[] {
  let current = worlds as World[];
  for (const { table, base } of hookChains(tables, hook)) {
    if (only && !only.includes(table)) continue;
    const next: World[] = [];
    const run: ChainRun = { table, hook, env, res: next };
    const frame: Frame = { depth: 0, ret: next, drop: base.policy === 'DROP' };
    for (const w of current) {
      if (w.verdict && w.verdict !== 'ACCEPT') next.push(w);
      else runChain(run, base, w, frame);
    }
    current = next;
  }
  return current === worlds ? [...worlds] : current;
}

type HookChains = Record<Hook, readonly { readonly table: string; readonly base: TraceChain }[]>;
const hookChainCache = new WeakMap<TraceTables, HookChains>();

/** The base chains of a hook in table order, found once per rule table. */
function hookChains(tables: TraceTables, hook: Hook): HookChains[Hook] {
  let h = hookChainCache.get(tables);
  if (!h) {
    const of = (k: Hook) => TABLE_ORDER[k].flatMap((table) => {
      const base = tables.get(table)?.get(k);
      return base ? [{ table, base }] : [];
    });
    h = { PREROUTING: of('PREROUTING'), INPUT: of('INPUT'), FORWARD: of('FORWARD'), OUTPUT: of('OUTPUT'),
      POSTROUTING: of('POSTROUTING') };
    hookChainCache.set(tables, h);
  }
  return h[hook];
}

/** What stays the same while one table's base chain runs on a hook: the hook's environment
 *  and where worlds that ended (a verdict, a NAT target) go. */
interface ChainRun {
  readonly table: string;
  readonly hook: Hook;
  readonly env: HookEnv;
  readonly res: World[];
}

/** One chain call: how deep it is, where its returns go (its caller's active worlds), and
 *  whether returning drops (a base chain with policy DROP). A `-g` keeps its caller's. */
interface Frame {
  readonly depth: number;
  readonly ret: World[];
  readonly drop: boolean;
}

/** A world leaves its chain by returning; in a base chain with policy DROP, that drops it. */
function returned(run: ChainRun, w: World, f: Frame): void {
  if (f.drop) {
    w.verdict = 'DROP';
    w.hops.push({ where: run.env.where, stage: `${run.table} ${run.hook}`, chain: run.hook, text: `policy DROP` });
  }
  f.ret.push(w);
}

function matches(rule: CompiledRule, x: World, env: HookEnv): boolean {
  if (rule.has !== 0 && !flatMatches(rule, x)) return false;
  const tests = rule.tests;
  for (let i = 0; i < tests.length; i++) if (!tests[i]!(x, env)) return false;
  return true;
}

function runChain(run: ChainRun, c: TraceChain | undefined, w: World, f: Frame): void {
  if (!c || f.depth > MAX_DEPTH) return returned(run, w, f);
  const env = run.env;
  // Worlds entering a chain share one destination; a DNAT ends the chain for its world.
  const rules = c.candidates ? c.candidates(w.pkt.dst) : c.rules;
  let x = w;
  for (let r = 0; r < rules.length; r++) {
    const rule = rules[r]!;
    if (!matches(rule, x, env)) continue;
    const t = rule.target;
    if (rule.probability < 1 || !(t.kind === 'none' || t.kind === 'continue' || t.kind === 'mark' ||
      (t.kind === 'jump' && !t.goto))) {
      // A random branch or an end of the chain: the general step, then breadth-first.
      const next: World[] = [];
      apply(run, rule, x, f, next);
      return runActive(run, rules, r + 1, next, f);
    }
    if (t.kind === 'jump') {
      if (isRecording(x)) x.hops.push(ruleHop(run.table, rule, env));
      // An empty chain returns the world as it came (kube-proxy keeps several empty).
      if (t.ref !== undefined && t.ref.rules.length === 0) continue;
      const back: World[] = [];
      runChain(run, t.ref, x, { depth: f.depth + 1, ret: back, drop: false });
      if (back.length !== 1) return runActive(run, rules, r + 1, back, f);
      x = back[0]!;
    } else {
      if (t.kind === 'mark') setMark(x, t);
      if (isRecording(x)) x.hops.push(ruleHop(run.table, rule, env));
    }
  }
  returned(run, x, f);
}

/** Rules `from`… over several active worlds, breadth-first. */
function runActive(run: ChainRun, rules: readonly CompiledRule[], from: number, worlds: World[], f: Frame): void {
  const env = run.env;
  let active = worlds;
  for (let r = from; r < rules.length && active.length > 0; r++) {
    const rule = rules[r]!;
    const next: World[] = [];
    for (let i = 0; i < active.length; i++) {
      const x = active[i]!;
      if (matches(rule, x, env)) apply(run, rule, x, f, next);
      else next.push(x);
    }
    active = next;
  }
  for (let i = 0; i < active.length; i++) returned(run, active[i]!, f);
}

function ruleHop(table: string, rule: CompiledRule, env: HookEnv): Hop {
  return {
    where: env.where, stage: `${table} ${rule.chain}`, chain: rule.chain, rule: rule.index, text: rule.text,
    origin: env.origin(rule.chain, rule),
  };
}

function setMark(x: World, t: Extract<CompiledRule['target'], { kind: 'mark' }>): void {
  x.mark = t.op === 'or' ? (x.mark | t.value) >>> 0
    : t.op === 'xor' ? (x.mark ^ t.value) >>> 0
      : ((x.mark & ~t.mask) ^ t.value) >>> 0; // xt_MARK: XOR after the mask, not OR
}

/** A matched rule on world `x`: its random branch (if any) and its target; `x` goes on in
 *  `next` unless the target ends or returns it. */
function apply(run: ChainRun, rule: CompiledRule, x: World, f: Frame, next: World[]): void {
  const { env, res } = run;
  const p = rule.probability;
  let taken = x;
  if (p < 1) {
    if (p <= 0) {
      next.push(x);
      return;
    }
    next.push(forkWorld(x, x.probability * (1 - p)));
    taken = forkWorld(x, x.probability * p);
  }
  const recording = isRecording(taken);
  const hop = recording ? ruleHop(run.table, rule, env) : NO_HOP;
  const t = rule.target;
  switch (t.kind) {
    case 'none':
    case 'continue':
      taken.hops.push(hop);
      next.push(taken);
      return;
    case 'mark':
      setMark(taken, t);
      taken.hops.push(hop);
      next.push(taken);
      return;
    case 'verdict':
      taken.hops.push(hop);
      if (t.verdict !== 'ACCEPT') taken.verdict = t.verdict;
      res.push(taken);
      return;
    case 'return':
      taken.hops.push(hop);
      returned(run, taken, f);
      return;
    case 'dnat': {
      const before = taken.pkt;
      taken.pkt = withDst(before, t.ip, t.port ?? before.dport);
      taken.dnat = true;
      if (recording) {
        const from = endpointString(before.dst, before.dport);
        taken.hops.push({ ...hop, nat: `DNAT ${from} → ${endpointString(t.ip, taken.pkt.dport)}` });
      }
      res.push(taken);
      return;
    }
    case 'masquerade':
    case 'snat': {
      const to = t.kind === 'snat' ? t.ip : env.masqueradeAddress ?? taken.pkt.src;
      if (recording) {
        taken.hops.push({ ...hop, nat: `${t.kind === 'snat' ? 'SNAT' : 'MASQUERADE'} src ${taken.pkt.src} → ${to}` });
      }
      const p0 = taken.pkt;
      taken.pkt = withSrc(p0, to);
      taken.snat = true;
      taken.masquerade = true;
      res.push(taken);
      return;
    }
    case 'jump':
      taken.hops.push(hop);
      // A goto's returns are the caller's; a jump's come back to this chain.
      if (t.goto) runChain(run, t.ref, taken, { depth: f.depth + 1, ret: f.ret, drop: f.drop });
      else runChain(run, t.ref, taken, { depth: f.depth + 1, ret: next, drop: false });
  }
}
