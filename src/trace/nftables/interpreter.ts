// Walks worlds through one netfilter hook of an nftables ruleset: every base chain on the hook
// (tables of the packet's family and `inet`) in priority order; jump/goto/return; verdict maps;
// `numgen random` branches forked with their probabilities.
//
// Chains run as one flat program per table (program.ts); a chain is its first op. A chain's
// outcomes go straight to lists its caller passes in, as in the iptables interpreter: ended
// worlds to `res`, returned ones to `ret`.
// While a chain holds one world it runs op by op without lists (runChain); once a rule leaves
// several (a random branch), the rest of the chain runs breadth-first (runActive): every world
// tries rule r before any tries rule r+1, which fixes the order of the outcomes.

import { endpointString, withDst, withSrc } from '../packet.js';
import { forkWorld, isRecording, type Hop, type HopOrigin, type World } from '../world.js';
import type { Hook } from '../iptables/interpreter.js';
import type { FieldEnv, Stmt, Verdict } from './compile.js';
import {
  Code, CODE, CODE_MASK, codeKind, codeTarget, NEGATE_BIT, NEXT, NUM, STRIDE, TARGET, verdictCode,
  VKind, type NftProgram,
} from './program.js';
import {
  compileMatch, compileVmap, type CompiledVmap, type Endpoints, type SetIndex, type Test,
} from './sets.js';

/** A base chain: where a hook enters its table's program. */
export interface NftChainIR {
  readonly name: string;
  readonly hook: string;
  readonly priority: number;
  readonly policy: string;
  /** The chain's first op in its table's program. */
  readonly start: number;
}

type Element = { readonly key: readonly string[]; readonly value?: readonly string[] };

export interface NftTableIR {
  /** `ip kube-proxy` */
  readonly key: string;
  readonly family: string;
  readonly sets: ReadonlyMap<string, readonly Element[]>;
  /** Lookup indexes built on first use, per set and key layout (the hot path of big tables). */
  readonly indexes: Map<string, SetIndex<unknown>>;
  /** The base chains (those with a hook), found once. */
  readonly baseChains: readonly NftChainIR[];
  /** Verdicts of map elements, parsed on first use (keyed by the element's value words). */
  readonly verdicts: WeakMap<readonly string[], Verdict | null>;
  /** The elements of a named set or map (none for an unknown name). */
  readonly setElements: (name: string) => readonly Element[];
  /** Every chain's rules as one program (program.ts), and each chain's first op. */
  readonly program: NftProgram;
  readonly starts: ReadonlyMap<string, number>;
}

export interface NftHookEnv extends FieldEnv {
  readonly where: string;
  readonly masqueradeAddress?: string;
  origin(chain: string): HopOrigin | undefined;
}

export type HookBases = readonly { readonly t: NftTableIR; readonly c: NftChainIR }[];

const MAX_DEPTH = 64;

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
  let current = worlds;
  for (let b = 0; b < bases.length; b++) {
    const { t, c } = bases[b]!;
    const next: World[] = [];
    const run: ChainRun = { t, env, res: next };
    const frame: Frame = { depth: 0, ret: next, drop: c.policy === 'drop' ? c : null };
    const anyFamily = t.family === 'inet';
    for (let i = 0; i < current.length; i++) {
      const w = current[i]!;
      const ended = w.verdict !== undefined && w.verdict !== 'ACCEPT';
      if (ended || (!anyFamily && t.family !== familyOf(w))) next.push(w);
      else runChain(run, c.start, w, frame);
    }
    current = next;
  }
  return current === worlds ? [...worlds] : (current as World[]);
}

function familyOf(w: World): string {
  return w.pkt.dst.includes(':') ? 'ip6' : 'ip';
}

/** What stays the same while one base chain runs: its table, the hook's environment, and where
 *  worlds that ended (a verdict, a NAT) go. */
interface ChainRun {
  readonly t: NftTableIR;
  readonly env: NftHookEnv;
  readonly res: World[];
}

/** One chain call: how deep it is, where its returns go (its caller's active worlds), and the
 *  base chain whose policy drop applies to a return (null below a jump). A goto keeps its
 *  caller's. */
interface Frame {
  readonly depth: number;
  readonly ret: World[];
  readonly drop: NftChainIR | null;
}

const deeper = (f: Frame): Frame => ({ depth: f.depth + 1, ret: f.ret, drop: f.drop });
const jumpFrame = (f: Frame, ret: World[]): Frame => ({ depth: f.depth + 1, ret, drop: null });

/** A world leaves its chain by returning; in a base chain with policy drop, that drops it. */
function returned(run: ChainRun, w: World, f: Frame): void {
  const drop = f.drop;
  if (drop) {
    w.verdict = 'DROP';
    const stage = `${run.t.key} ${drop.name}`;
    w.hops.push({ where: run.env.where, stage, chain: drop.name, text: 'policy drop' });
  }
  f.ret.push(w);
}

/** Runs the chain starting at op `start` (-1: no such chain, the world returns) on one world
 *  until it ends or a rule leaves several worlds. */
function runChain(run: ChainRun, start: number, w: World, f: Frame): void {
  if (start < 0 || f.depth > MAX_DEPTH) return returned(run, w, f);
  const { t, env } = run;
  const ints = t.program.ints;
  let x = w;
  let pc = start;
  for (;;) {
    const at = pc * STRIDE;
    const word = ints[at + CODE]!;
    const code = word & CODE_MASK;
    if (code <= Code.CtFalse) {
      pc = fastMatches(t, pc, word, x) ? pc + 1 : ints[at + NEXT]!;
      continue;
    }
    switch (code) {
      case Code.Test:
        pc = testOf(t, pc)(x, env) ? pc + 1 : ints[at + NEXT]!;
        continue;
      case Code.End:
        if (isRecording(x)) x.hops.push(ruleHop(t, pc, env));
        pc++;
        continue;
      case Code.ChainEnd:
        return returned(run, x, f);
      case Code.Jump: {
        if (isRecording(x)) x.hops.push(ruleHop(t, pc, env));
        const back: World[] = [];
        runChain(run, ints[at + TARGET]!, x, jumpFrame(f, back));
        pc = ints[at + NEXT]!;
        if (back.length !== 1) return runActive(run, pc, back, f);
        x = back[0]!;
        continue;
      }
      case Code.Goto:
        if (isRecording(x)) x.hops.push(ruleHop(t, pc, env));
        return runChain(run, ints[at + TARGET]!, x, deeper(f));
      case Code.Vmap: {
        const m = vmapOf(t, pc);
        const resume = ints[at + NEXT]!;
        if (m.kind === 'keyed') {
          const v = m.lookup(x, env);
          // No element: the rule ends and the world goes on unchanged.
          if (v !== -1) {
            if (isRecording(x)) x.hops.push(ruleHop(t, pc, env));
            const y = takeVerdict(run, v, x, f, resume);
            if (y === null) return;
            x = y;
          }
          pc = resume;
          continue;
        }
        // A random branch: the general step, then breadth-first unless one world is left.
        const next: World[] = [];
        runRule(run, pc, x, f, next);
        if (next.length !== 1) return runActive(run, resume, next, f);
        x = next[0]!;
        pc = resume;
        continue;
      }
      case Code.Verdict: {
        if (isRecording(x)) x.hops.push(ruleHop(t, pc, env));
        const resume = ints[at + NEXT]!;
        const y = takeVerdict(run, ints[at + NUM]!, x, f, resume);
        if (y === null) return;
        x = y;
        pc = resume;
        continue;
      }
      case Code.Continue:
        if (isRecording(x)) x.hops.push(ruleHop(t, pc, env));
        pc++;
        continue;
      case Code.Dnat: case Code.Masquerade: case Code.Snat:
        nat(t, pc, code, x, env);
        run.res.push(x);
        return;
      case Code.Nop:
        pc++;
        continue;
      default:
        setMark(code, ints[at + NUM]!, x);
        pc++;
    }
  }
}

/** A verdict (its code) on the one world of runChain: the world that goes on with the rule at
 *  `resume`, or null when the chain is done with it. */
function takeVerdict(run: ChainRun, v: number, x: World, f: Frame, resume: number): World | null {
  switch (codeKind(v)) {
    case VKind.Accept: run.res.push(x); return null;
    case VKind.Drop: x.verdict = 'DROP'; run.res.push(x); return null;
    case VKind.Reject: x.verdict = 'REJECT'; run.res.push(x); return null;
    case VKind.Return: returned(run, x, f); return null;
    // A map's `continue` ends the rule (a `continue` statement is Code.Continue).
    case VKind.Continue: return x;
    case VKind.Goto:
      runChain(run, codeTarget(v), x, deeper(f));
      return null;
    case VKind.Jump: {
      const back: World[] = [];
      runChain(run, codeTarget(v), x, jumpFrame(f, back));
      if (back.length === 1) return back[0]!;
      runActive(run, resume, back, f);
      return null;
    }
  }
}

/** The rules from the one starting at op `from` to the chain's end, over several worlds,
 *  breadth-first. */
function runActive(run: ChainRun, from: number, worlds: World[], f: Frame): void {
  const ints = run.t.program.ints;
  let active = worlds;
  for (let pc = from; active.length > 0; pc = ints[pc * STRIDE + NEXT]!) {
    if ((ints[pc * STRIDE + CODE]! & CODE_MASK) === Code.ChainEnd) break;
    const next: World[] = [];
    for (let i = 0; i < active.length; i++) runRule(run, pc, active[i]!, f, next);
    active = next;
  }
  for (let i = 0; i < active.length; i++) returned(run, active[i]!, f);
}

/** Runs the rule holding op `from`, from that op, on `x`; pushes to `next` (the rule fell
 *  through or did not match) or to the sinks (a verdict reached). */
function runRule(run: ChainRun, from: number, x: World, f: Frame, next: World[]): void {
  const { t, env } = run;
  const ints = t.program.ints;
  for (let pc = from; ; pc++) {
    const at = pc * STRIDE;
    const word = ints[at + CODE]!;
    const code = word & CODE_MASK;
    if (code <= Code.Test) {
      if (!(code === Code.Test ? testOf(t, pc)(x, env) : fastMatches(t, pc, word, x))) {
        next.push(x);
        return;
      }
      continue;
    }
    switch (code) {
      case Code.Vmap:
        return runVmap(run, pc, x, f, next);
      case Code.Jump: case Code.Goto: {
        if (isRecording(x)) x.hops.push(ruleHop(t, pc, env));
        const v = verdictCode(code === Code.Jump ? VKind.Jump : VKind.Goto, ints[at + TARGET]!);
        return verdict(run, v, x, f, next);
      }
      case Code.Verdict:
        if (isRecording(x)) x.hops.push(ruleHop(t, pc, env));
        return verdict(run, ints[at + NUM]!, x, f, next);
      case Code.Continue:
        if (isRecording(x)) x.hops.push(ruleHop(t, pc, env));
        continue;
      case Code.Dnat: case Code.Masquerade: case Code.Snat:
        nat(t, pc, code, x, env);
        run.res.push(x);
        return;
      case Code.End:
        if (isRecording(x)) x.hops.push(ruleHop(t, pc, env));
        next.push(x);
        return;
      case Code.Nop:
        continue;
      default:
        setMark(code, ints[at + NUM]!, x);
    }
  }
}

/** A verdict (its code) on `x` in runRule. */
function verdict(run: ChainRun, v: number, x: World, f: Frame, next: World[]): void {
  switch (codeKind(v)) {
    case VKind.Accept: run.res.push(x); return;
    case VKind.Drop: x.verdict = 'DROP'; run.res.push(x); return;
    case VKind.Reject: x.verdict = 'REJECT'; run.res.push(x); return;
    case VKind.Return: returned(run, x, f); return;
    // A `continue` statement resumes its rule (runRule); a map's `continue` ends the rule.
    case VKind.Continue: next.push(x); return;
    // A goto's returns are the caller's.
    case VKind.Goto: runChain(run, codeTarget(v), x, deeper(f)); return;
    case VKind.Jump: runChain(run, codeTarget(v), x, jumpFrame(f, next));
  }
}

function runVmap(run: ChainRun, pc: number, x: World, f: Frame, next: World[]): void {
  const { t, env } = run;
  const m = vmapOf(t, pc);
  if (m.kind === 'keyed') {
    const v = m.lookup(x, env);
    // No element: the rule ends and the world goes on unchanged.
    if (v === -1) {
      next.push(x);
      return;
    }
    if (isRecording(x)) x.hops.push(ruleHop(t, pc, env));
    return verdict(run, v, x, f, next);
  }
  const codes = m.codes;
  if (codes.length === 1 && m.p === 1) {
    if (isRecording(x)) x.hops.push(ruleHop(t, pc, env));
    return verdict(run, codes[0]!, x, f, next);
  }
  const ep = f.depth + 1 <= MAX_DEPTH ? m.endpoints : undefined;
  if (ep !== undefined) touch(ep);
  for (let i = 0; i < codes.length; i++) {
    const y = forkWorld(x, x.probability * m.p);
    if (isRecording(y)) y.hops.push(ruleHop(t, pc, env));
    else if (ep !== undefined) {
      runEndpoint(run, ep, i, codes[i]!, y, f);
      continue;
    }
    verdict(run, codes[i]!, y, f, next);
  }
  if (m.missing > 1e-12) next.push(forkWorld(x, x.probability * m.missing));
}

/** Reads every endpoint address in one go: in a big table they are cold, and loads that do
 *  not wait on each other overlap (the branch loop would take the misses one at a time). */
function touch(ep: Endpoints): void {
  let n = 0;
  for (let i = 0; i < ep.dnat.length; i++) n += ep.dnat[i]!.length;
  ep.touched = n;
}

/**
 * `goto` branch i's endpoint chain (one below `f`) on `y`, which keeps no hops: as runChain would
 * run it (program.ts endpointShape). The source being the endpoint (hairpin) takes the program.
 */
function runEndpoint(run: ChainRun, ep: Endpoints, i: number, code: number, y: World, f: Frame): void {
  const p = y.pkt;
  if (ep.saddrOwn[i] === 1 && p.src === ep.saddr[i]) {
    return runChain(run, codeTarget(code), y, deeper(f));
  }
  if (p.proto !== ep.proto[i]) return returned(run, y, f);
  const port = ep.port[i]!;
  y.pkt = withDst(p, ep.dnat[i]!, port >= 0 ? port : p.dport);
  y.dnat = true;
  run.res.push(y);
}

/** A fast match (Code.IpSaddr…CtFalse) on `x`; a payload of the other family never matches,
 *  negated or not. For `ip saddr A` (not negated), NUM is 1 when A is of the op's family:
 *  then equal addresses imply the family test. */
function fastMatches(t: NftTableIR, pc: number, word: number, x: World): boolean {
  const code = word & CODE_MASK;
  const negate = (word & NEGATE_BIT) !== 0;
  let hit: boolean;
  switch (code) {
    case Code.IpSaddr: case Code.Ip6Saddr:
      if (!negate) {
        return t.program.ints[pc * STRIDE + NUM] === 1 && x.pkt.src === t.program.texts[pc];
      }
      if (x.pkt.src.includes(':') !== (code === Code.Ip6Saddr)) return false;
      hit = x.pkt.src === t.program.texts[pc];
      break;
    case Code.IpDaddr: case Code.Ip6Daddr:
      if (x.pkt.dst.includes(':') !== (code === Code.Ip6Daddr)) return false;
      hit = x.pkt.dst === t.program.texts[pc];
      break;
    case Code.L4proto: hit = x.pkt.proto === t.program.texts[pc]; break;
    case Code.CtTrue: hit = true; break;
    case Code.CtDnat: hit = x.dnat; break;
    case Code.CtSnat: hit = x.snat; break;
    default: hit = false;
  }
  return negate ? !hit : hit;
}

function testOf(t: NftTableIR, pc: number): Test {
  const p = t.program;
  const st = p.stmts[pc] as Extract<Stmt, { kind: 'match' }>;
  return (p.compiled[pc] ??= compileMatch(t, st)) as Test;
}

function vmapOf(t: NftTableIR, pc: number): CompiledVmap {
  const p = t.program;
  const st = p.stmts[pc] as Extract<Stmt, { kind: 'vmap' }>;
  return (p.compiled[pc] ??= compileVmap(t, st)) as CompiledVmap;
}

function setMark(code: Code, num: number, x: World): void {
  x.mark = code === Code.MarkOr ? (x.mark | num) >>> 0
    : code === Code.MarkXor ? (x.mark ^ num) >>> 0
      : code === Code.MarkAnd ? (x.mark & num) >>> 0 : num >>> 0;
}

/** dnat / masquerade / snat on `x` (the caller ends the chain for it). */
function nat(t: NftTableIR, pc: number, code: Code, x: World, env: NftHookEnv): void {
  const recording = isRecording(x);
  const text = t.program.texts[pc]!;
  if (code === Code.Dnat) {
    const before = x.pkt;
    const num = t.program.ints[pc * STRIDE + NUM]!;
    const port = num >= 0 ? num : num === -1 ? before.dport
      : (t.program.stmts[pc] as Extract<Stmt, { kind: 'dnat' }>).port!;
    x.pkt = withDst(before, text, port);
    x.dnat = true;
    if (recording) {
      const from = endpointString(before.dst, before.dport);
      const to = endpointString(x.pkt.dst, x.pkt.dport);
      x.hops.push({ ...ruleHop(t, pc, env), nat: `DNAT ${from} → ${to}` });
    }
    return;
  }
  const snat = code === Code.Snat;
  const to = snat ? text : env.masqueradeAddress ?? x.pkt.src;
  if (recording) {
    const nat = `${snat ? 'SNAT' : 'MASQUERADE'} src ${x.pkt.src} → ${to}`;
    x.hops.push({ ...ruleHop(t, pc, env), nat });
  }
  x.pkt = withSrc(x.pkt, to);
  x.snat = true;
  x.masquerade = true;
}

/** The hop of the rule holding op `pc`. */
function ruleHop(t: NftTableIR, pc: number, env: NftHookEnv): Hop {
  const rule = t.program.rules[pc]!;
  return {
    where: env.where, stage: `${t.key} ${rule.chain}`, chain: rule.chain, rule: rule.index,
    text: rule.comment ? `${rule.text} comment "${rule.comment}"` : rule.text,
    origin: env.origin(rule.chain),
  };
}
