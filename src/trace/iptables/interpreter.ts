// Walks worlds through one netfilter hook of an iptables table set: tables in priority order
// (raw, mangle, nat, filter), chains with jumps, gotos and returns, random branches forked.
// First packet of a connection only: ctstate NEW (+DNAT/SNAT once applied); `recent` affinity
// lists are empty (a fresh client).

import { endpointString, withDst, withSrc } from '../packet.js';
import { forkWorld, isRecording, type Hop, type HopOrigin, type World } from '../world.js';

/** Stands in for hop records when a world keeps none. */
const NO_HOP: Hop = { where: '', stage: '', text: '' };
import type { CompiledRule, MatchEnv } from './rule.js';
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

type End = 'accept' | 'return' | 'terminal';
interface Outcome { readonly w: World; readonly end: End }

const MAX_DEPTH = 64;

/** Runs the hook's tables in priority order (or only `only`, for callers that interleave). */
export function runHook(
  tables: TraceTables, hook: Hook, worlds: readonly World[], env: HookEnv, only?: readonly string[],
): World[] {
  let current = worlds as World[];
  for (const table of TABLE_ORDER[hook]) {
    if (only && !only.includes(table)) continue;
    const base = tables.get(table)?.get(hook);
    if (!base) continue;
    const next: World[] = [];
    for (const w of current) {
      if (w.verdict && w.verdict !== 'ACCEPT') {
        next.push(w);
        continue;
      }
      for (const o of runChain(tables, table, base, w, env, 0)) {
        if (o.end === 'return' && base.policy === 'DROP') {
          o.w.verdict = 'DROP';
          o.w.hops.push({ where: env.where, stage: `${table} ${hook}`, chain: hook, text: `policy DROP` });
        }
        next.push(o.w);
      }
    }
    current = next;
  }
  return current === worlds ? [...worlds] : current;
}

function runChain(
  tables: TraceTables, table: string, c: TraceChain | undefined, w: World, env: HookEnv, depth: number,
): Outcome[] {
  if (!c || depth > MAX_DEPTH) return [{ w, end: 'return' }];
  const results: Outcome[] = [];
  // Two buffers swapped per rule: `step` reads worlds from `active` and pushes to `next`.
  let active: World[] = [w];
  let next: World[] = [];
  // Worlds entering a chain share one destination; a DNAT ends the chain for its world.
  const rules = c.candidates ? c.candidates(w.pkt.dst) : c.rules;
  for (let r = 0; r < rules.length && active.length > 0; r++) {
    const rule = rules[r]!;
    for (let i = 0; i < active.length; i++) {
      step(tables, table, rule, active[i]!, env, depth, next, results);
    }
    const done = active;
    active = next;
    next = done;
    next.length = 0;
  }
  for (const x of active) results.push({ w: x, end: 'return' });
  return results;
}

function step(
  tables: TraceTables, table: string, rule: CompiledRule, x: World, env: HookEnv, depth: number,
  next: World[], results: Outcome[],
): void {
  const tests = rule.tests;
  for (let i = 0; i < tests.length; i++) {
    if (!tests[i]!(x, env)) {
      next.push(x);
      return;
    }
  }
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
  const hop = recording ? {
    where: env.where, stage: `${table} ${rule.chain}`, chain: rule.chain, rule: rule.index, text: rule.text,
    origin: env.origin(rule.chain, rule),
  } : NO_HOP;
  const t = rule.target;
  switch (t.kind) {
    case 'none':
    case 'continue':
      taken.hops.push(hop);
      next.push(taken);
      return;
    case 'mark':
      taken.mark = t.op === 'or' ? (taken.mark | t.value) >>> 0
        : t.op === 'xor' ? (taken.mark ^ t.value) >>> 0
          : ((taken.mark & ~t.mask) | t.value) >>> 0;
      taken.hops.push(hop);
      next.push(taken);
      return;
    case 'verdict':
      taken.hops.push(hop);
      if (t.verdict === 'ACCEPT') {
        results.push({ w: taken, end: 'accept' });
      } else {
        taken.verdict = t.verdict;
        results.push({ w: taken, end: 'terminal' });
      }
      return;
    case 'return':
      taken.hops.push(hop);
      results.push({ w: taken, end: 'return' });
      return;
    case 'dnat': {
      const before = taken.pkt;
      taken.pkt = withDst(before, t.ip, t.port ?? before.dport);
      taken.dnat = true;
      if (recording) {
        const from = endpointString(before.dst, before.dport);
        taken.hops.push({ ...hop, nat: `DNAT ${from} → ${endpointString(t.ip, taken.pkt.dport)}` });
      }
      results.push({ w: taken, end: 'accept' });
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
      results.push({ w: taken, end: 'accept' });
      return;
    }
    case 'jump': {
      taken.hops.push(hop);
      for (const o of runChain(tables, table, t.ref, taken, env, depth + 1)) {
        if (o.end !== 'return') results.push(o);
        else if (t.goto) results.push(o);
        else next.push(o.w);
      }
    }
  }
}
