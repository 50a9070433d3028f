// A table's chains as one flat program: the statements of every rule in order, an `End` op
// closing each rule and a `ChainEnd` op closing each chain; a chain is the index of its first
// op. Big tables (a chain per endpoint) are walked cold, so every pointer the interpreter
// follows costs: the hot fields of all ops sit in one Int32Array (four ints per op), so an
// endpoint chain is a few cache lines, where objects per chain, rule and statement were many.
// Semantics are the statements' own (compile.ts); this only changes their layout.

import { FastMatch, type CompiledNftRule, type Stmt, type Verdict } from './compile.js';

export enum Code {
  /** Fast matches (see FastMatch): `texts[op]` is the literal; NEGATE applies. */
  IpSaddr, IpDaddr, Ip6Saddr, Ip6Daddr, L4proto, CtTrue, CtDnat, CtSnat, CtFalse,
  /** A match compiled to a closure on first use (sets, prefixes, masks...). */
  Test,
  /** A verdict map (keyed or numgen), compiled on first use. */
  Vmap,
  /** `jump` / `goto`: TARGET is the chain's first op (-1: no such chain). */
  Jump, Goto,
  /** accept, drop, reject, return: NUM is the verdict's code (verdictCode). */
  Verdict,
  /** A `continue` statement: records the rule and goes on with the next statement. */
  Continue,
  /** `mark set mark or|xor|and N`, `mark set N`: NUM is N. */
  MarkOr, MarkXor, MarkAnd, MarkSet,
  /** A set update: no effect on a first packet. */
  Nop,
  /** `dnat to texts[op][:NUM]` (NUM -1: keep the port; -2: see the statement), `masquerade`,
   *  `snat to texts[op]`. */
  Dnat, Masquerade, Snat,
  /** The rule fell through: record it, go on with the next rule. */
  End,
  /** The chain's end: the world returns. */
  ChainEnd,
}

/** A verdict as one int (see verdictCode). */
export enum VKind { Accept, Drop, Reject, Return, Continue, Jump, Goto }

/** The kind in the low 3 bits, a jump/goto chain's first op + 1 above (0: no such chain). */
export function verdictCode(kind: VKind, target = -1): number {
  return kind | ((target + 1) << 3);
}

export function codeKind(code: number): VKind {
  return code & 7;
}

export function codeTarget(code: number): number {
  return (code >> 3) - 1;
}

const VKINDS: Readonly<Record<Verdict['kind'], VKind>> = {
  accept: VKind.Accept, drop: VKind.Drop, reject: VKind.Reject, return: VKind.Return,
  continue: VKind.Continue, jump: VKind.Jump, goto: VKind.Goto,
};

/** A verdict's code; jump/goto targets are looked up in `starts`. */
export function encodeVerdict(v: Verdict, starts: ReadonlyMap<string, number>): number {
  const target = v.kind === 'jump' || v.kind === 'goto' ? starts.get(v.chain) ?? -1 : -1;
  return verdictCode(VKINDS[v.kind], target);
}

/** Ints per op in `ints`, and the offset of each. */
export const STRIDE = 4;
/** Code | NEGATE_BIT. */
export const CODE = 0;
/** The first op of the next rule: where a failed match (and a verdict) goes on. */
export const NEXT = 1;
export const NUM = 2;
export const TARGET = 3;
export const CODE_MASK = 0xff;
export const NEGATE_BIT = 0x100;

export interface NftProgram {
  readonly ints: Int32Array;
  /** Per op: the literal of a fast match, the address of a dnat/snat. */
  readonly texts: readonly (string | undefined)[];
  /** Per op: its rule (for hops). */
  readonly rules: readonly CompiledNftRule[];
  /** Per op: its statement (Test and Vmap compile from it), undefined for End/ChainEnd. */
  readonly stmts: readonly (Stmt | undefined)[];
  /** Per op: a Test's or Vmap's compiled form, made on first use (see sets.ts). */
  readonly compiled: unknown[];
}

interface RawOp {
  code: Code;
  negate: boolean;
  num: number;
  target?: string;
  text?: string;
  rule: CompiledNftRule;
  stmt?: Stmt;
}

/** Builds one program for a table's chains; returns it with each chain's first op. */
export function buildProgram(
  chains: readonly { readonly name: string; readonly rules: readonly CompiledNftRule[] }[],
): { program: NftProgram; starts: Map<string, number> } {
  const raw: RawOp[] = [];
  const nexts: number[] = [];
  const starts = new Map<string, number>();
  for (const c of chains) {
    starts.set(c.name, raw.length);
    for (const rule of c.rules) {
      const first = raw.length;
      for (const st of rule.stmts) raw.push(opOf(rule, st));
      raw.push({ code: Code.End, negate: false, num: 0, rule });
      for (let i = first; i < raw.length; i++) nexts[i] = raw.length;
    }
    const last = c.rules[c.rules.length - 1];
    nexts[raw.length] = raw.length + 1;
    raw.push({ code: Code.ChainEnd, negate: false, num: 0, rule: last ?? NO_RULE });
  }
  const ints = new Int32Array(raw.length * STRIDE);
  raw.forEach((op, i) => {
    ints[i * STRIDE + CODE] = op.code | (op.negate ? NEGATE_BIT : 0);
    ints[i * STRIDE + NEXT] = nexts[i]!;
    ints[i * STRIDE + NUM] = op.num;
    ints[i * STRIDE + TARGET] = op.target === undefined ? -1 : starts.get(op.target) ?? -1;
  });
  // Equal texts share one string: an endpoint chain's `ip saddr A` and `dnat to A` then load one
  // string, which the walk reads again (a big table's strings are cold).
  const strings = new Map<string, string>();
  const text = (s: string | undefined) => {
    if (s === undefined) return s;
    const known = strings.get(s);
    if (known !== undefined) return known;
    strings.set(s, s);
    return s;
  };
  const program: NftProgram = {
    ints,
    texts: raw.map((o) => text(o.text)),
    rules: raw.map((o) => o.rule),
    stmts: raw.map((o) => o.stmt),
    compiled: new Array(raw.length).fill(undefined),
  };
  return { program, starts };
}

const NO_RULE: CompiledNftRule = { chain: '', index: 0, text: '', stmts: [] };

const FAST_CODES: Readonly<Record<FastMatch, Code>> = {
  [FastMatch.None]: Code.Test,
  [FastMatch.IpSaddr]: Code.IpSaddr, [FastMatch.IpDaddr]: Code.IpDaddr,
  [FastMatch.Ip6Saddr]: Code.Ip6Saddr, [FastMatch.Ip6Daddr]: Code.Ip6Daddr,
  [FastMatch.L4proto]: Code.L4proto, [FastMatch.CtTrue]: Code.CtTrue,
  [FastMatch.CtDnat]: Code.CtDnat, [FastMatch.CtSnat]: Code.CtSnat,
  [FastMatch.CtFalse]: Code.CtFalse,
};

const MARK_CODES = {
  or: Code.MarkOr, xor: Code.MarkXor, and: Code.MarkAnd, set: Code.MarkSet,
} as const;

function opOf(rule: CompiledNftRule, st: Stmt): RawOp {
  const op = (code: Code, o: Partial<RawOp> = {}): RawOp =>
    ({ code, negate: false, num: 0, rule, stmt: st, ...o });
  switch (st.kind) {
    case 'match': {
      const code = FAST_CODES[st.fast];
      // `ip saddr A`: NUM 1 when A is of the op's family (see the interpreter's fastMatches).
      const v6 = code === Code.Ip6Saddr;
      const own = (code === Code.IpSaddr || v6) && st.fastText?.includes(':') === v6 ? 1 : 0;
      return op(code, { text: st.fastText, num: own, negate: st.negate });
    }
    case 'vmap': return op(Code.Vmap);
    case 'verdict': {
      const v = st.verdict;
      if (v.kind === 'jump' || v.kind === 'goto') {
        return op(v.kind === 'jump' ? Code.Jump : Code.Goto, { target: v.chain });
      }
      if (v.kind === 'continue') return op(Code.Continue);
      return op(Code.Verdict, { num: verdictCode(VKINDS[v.kind]) });
    }
    // Marks are 32-bit: stored as int32, read back unsigned.
    case 'mark': return op(MARK_CODES[st.op], { num: st.value | 0 });
    case 'update-set': return op(Code.Nop);
    // A port that int32 cannot hold (never valid) is read from the statement (NUM -2).
    case 'dnat': {
      const p = st.port;
      const port = p === undefined ? -1 : p === (p | 0) && p >= 0 ? p : -2;
      return op(Code.Dnat, { text: st.ip, num: port });
    }
    case 'masquerade': return op(Code.Masquerade);
    case 'snat': return op(Code.Snat, { text: st.ip });
  }
}

/**
 * kube-proxy's endpoint chain, if the chain at `start` is one (and nothing else):
 *   ip saddr A jump mark-for-masquerade   (A: `saddr`; `saddrOwn` as NUM of a fast IpSaddr)
 *   meta l4proto P dnat to D[:port]       (`port` as NUM of Dnat, never -2)
 * Both matches plain (not negated). Lets a numgen map run its endpoints without the program.
 */
export interface EndpointShape {
  readonly saddrOwn: number;
  readonly saddr: string | undefined;
  readonly proto: string | undefined;
  readonly dnat: string;
  readonly port: number;
}

export function endpointShape(p: NftProgram, start: number): EndpointShape | undefined {
  if (start < 0) return undefined;
  const code = (k: number) => p.ints[(start + k) * STRIDE + CODE]!;
  const num = (k: number) => p.ints[(start + k) * STRIDE + NUM]!;
  // Whole words: a negated match (NEGATE_BIT set) is not the shape.
  const first = code(0) === Code.Ip6Saddr ? Code.Ip6Saddr : Code.IpSaddr;
  const shape = [first, Code.Jump, Code.End, Code.L4proto, Code.Dnat, Code.End, Code.ChainEnd];
  if (p.ints.length < (start + shape.length) * STRIDE) return undefined;
  for (let k = 0; k < shape.length; k++) if (code(k) !== shape[k]) return undefined;
  if (num(4) === -2) return undefined;
  return {
    saddrOwn: num(0), saddr: p.texts[start], proto: p.texts[start + 3], dnat: p.texts[start + 4]!,
    port: num(4),
  };
}
