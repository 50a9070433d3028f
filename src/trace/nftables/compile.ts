// Compiles nft rule token lists into evaluable statements, strictly: an expression or statement
// the tracer does not model is an error naming the rule. Covers what kube-proxy writes and what
// `nft list ruleset` prints back (payload matches, sets and verdict maps, numgen, fib, ct state,
// mark arithmetic, dnat/masquerade, set updates).

import { canonicalIP, compareIPs } from '../../api/net.js';
import { kdpError } from '../../errors.js';
import { compileAddress } from '../packet.js';
import type { World } from '../world.js';

/** What a field reads besides the world (packet, mark, conntrack): the hook's surroundings. */
export interface FieldEnv {
  readonly inIface?: string;
  readonly outIface?: string;
  isLocal(ip: string): boolean;
}

export type FieldGet = (w: World, env: FieldEnv) => string | number | undefined;

/** An expression yields a value: a string, a number, or (numgen) a random index. */
export type Expr =
  | { kind: 'field'; name: string; get: FieldGet;
    /** `[name]`, made once: what evaluation reports as the field names. */
    names: readonly string[] }
  | { kind: 'numgen'; mod: number; offset: number }
  | { kind: 'concat'; parts: Expr[]; names: readonly string[] };

/** The field names an expression yields, one per part. */
export function exprNames(e: Expr): readonly string[] {
  return e.kind === 'numgen' ? ['numgen'] : e.names;
}

export type Verdict =
  | { kind: 'accept' } | { kind: 'drop' } | { kind: 'reject' } | { kind: 'return' } | { kind: 'continue' }
  | { kind: 'jump'; chain: string } | { kind: 'goto'; chain: string };

export type Stmt =
  | { kind: 'match'; expr: Expr; mask?: number; negate: boolean; value: ValueRef;
    /** A fast form of the commonest shapes (see FastMatch), decided at compile time. */
    fast: FastMatch; fastText: string | undefined }
  | { kind: 'vmap'; expr: Expr; map: ValueRef }
  | { kind: 'verdict'; verdict: Verdict }
  | { kind: 'mark'; op: 'or' | 'xor' | 'and' | 'set'; value: number }
  | { kind: 'dnat'; ip: string; port?: number }
  | { kind: 'masquerade' }
  | { kind: 'snat'; ip: string }
  | { kind: 'update-set'; set: string };

/** A literal, an anonymous set `{ a, b }` (with optional `: verdict` values), or `@named`. */
export type ValueRef =
  | { kind: 'literal'; parts: string[] }
  | { kind: 'anon'; elements: { key: string[]; value?: string[] }[] }
  | { kind: 'named'; name: string };

export interface CompiledNftRule {
  readonly chain: string;
  readonly index: number;
  readonly text: string;
  readonly comment?: string;
  readonly stmts: readonly Stmt[];
}

/** Splits `{`, `}` and `,` off words (nft prints `{ a, b }`; kube-proxy writes `{ a , b }`). */
export function normaliseTokens(tokens: readonly string[]): string[] {
  return tokens.join(' ').replace(/([{},])/g, ' $1 ').split(/\s+/).filter(Boolean);
}

/** nft's numeric `meta l4proto` values → the names a packet carries. */
export const PROTO_NUM: Record<string, string> = { '6': 'tcp', '17': 'udp', '132': 'sctp', '1': 'icmp', '58': 'icmp' };

export function compileNftRule(chain: string, index: number, tokens: readonly string[], comment?: string): CompiledNftRule {
  const text = tokens.join(' ');
  const t = normaliseTokens(tokens);
  const fail = (why: string): never => {
    throw kdpError('KDP_TRACE', `unsupported nft rule (${why}): chain ${chain}: ${text}`);
  };
  let i = 0;
  const peek = (k = 0) => t[i + k];
  const next = () => t[i++] ?? fail('unexpected end of rule');
  const stmts: Stmt[] = [];

  const primary = (): Expr => {
    const w = next();
    const f = (name: string, get: FieldGet): Expr => ({ kind: 'field', name, get, names: [name] });
    switch (w) {
      case 'ip': case 'ip6': {
        const which = next();
        if (which !== 'saddr' && which !== 'daddr') return fail(`${w} ${which}`);
        const v6 = w === 'ip6';
        return f(`${w} ${which}`, (x) => (x.pkt.src.includes(':') === v6 ? (which === 'saddr' ? x.pkt.src : x.pkt.dst) : undefined));
      }
      case 'meta': {
        const k = next();
        if (k === 'l4proto') return f('meta l4proto', (x) => x.pkt.proto);
        if (k === 'mark') return f('meta mark', (x) => x.mark);
        if (k === 'iifname') return f('iifname', (x, e) => e.inIface);
        if (k === 'oifname') return f('oifname', (x, e) => e.outIface);
        return fail(`meta ${k}`);
      }
      case 'mark': return f('meta mark', (x) => x.mark);
      case 'iifname': return f('iifname', (x, e) => e.inIface);
      case 'oifname': return f('oifname', (x, e) => e.outIface);
      case 'th': case 'tcp': case 'udp': case 'sctp': {
        const k = next();
        if (k !== 'dport' && k !== 'sport') return fail(`${w} ${k}`);
        return f(`${w} ${k}`, (x) => {
          if (x.pkt.proto === 'icmp' || (w !== 'th' && x.pkt.proto !== w)) return undefined;
          return k === 'dport' ? x.pkt.dport : x.pkt.sport;
        });
      }
      case 'ct': {
        const k = next();
        if (k !== 'state') return fail(`ct ${k}`);
        return f('ct state', () => 'ctstate');
      }
      case 'fib': {
        const which = next();
        const k = next();
        if ((which !== 'daddr' && which !== 'saddr') || k !== 'type') return fail(`fib ${which} ${k}`);
        return f(`fib ${which} type`, (x, e) => (e.isLocal(which === 'daddr' ? x.pkt.dst : x.pkt.src) ? 'local' : 'unicast'));
      }
      case 'numgen': {
        if (next() !== 'random' || next() !== 'mod') return fail('numgen mode');
        const mod = Number(next());
        let offset = 0;
        if (peek() === 'offset') {
          i++;
          offset = Number(next());
        }
        return { kind: 'numgen', mod, offset };
      }
      default: return fail(`expression ${w}`);
    }
  };

  const expr = (): Expr => {
    const parts = [primary()];
    while (peek() === '.') {
      i++;
      parts.push(primary());
    }
    return parts.length === 1 ? parts[0]! : { kind: 'concat', parts, names: parts.flatMap(exprNames) };
  };

  const literalParts = (): string[] => {
    const parts = [next()];
    while (peek() === '.') {
      i++;
      parts.push(next());
    }
    return parts;
  };

  const value = (): ValueRef => {
    const w = peek();
    if (w?.startsWith('@')) {
      i++;
      return { kind: 'named', name: w.slice(1) };
    }
    if (w === '{') {
      i++;
      const elements: { key: string[]; value?: string[] }[] = [];
      while (peek() !== '}') {
        const key = literalParts();
        let v: string[] | undefined;
        if (peek() === ':') {
          i++;
          v = [next()];
          if (v[0] === 'goto' || v[0] === 'jump') v.push(next());
        }
        elements.push({ key, value: v });
        if (peek() === ',') i++;
        else if (peek() !== '}') fail('set element');
      }
      i++;
      return { kind: 'anon', elements };
    }
    const first = literalParts();
    if (peek() !== ',') return { kind: 'literal', parts: first };
    // `ct state established,related`: a bare comma list is an anonymous set.
    const elements = [{ key: first }];
    while (peek() === ',') {
      i++;
      elements.push({ key: literalParts() });
    }
    return { kind: 'anon', elements };
  };

  const verdictWord = (w: string): Verdict | undefined => {
    if (w === 'accept' || w === 'drop' || w === 'return' || w === 'continue') return { kind: w };
    if (w === 'reject') return { kind: 'reject' };
    if (w === 'jump' || w === 'goto') return { kind: w, chain: next() };
    return undefined;
  };

  while (i < t.length) {
    const w = peek()!;
    if (w === 'counter') {
      i++;
      while (peek() === 'packets' || peek() === 'bytes') i += 2;
      continue;
    }
    if (w === 'reject') {
      i++;
      if (peek() === 'with') i += peek(1) === 'tcp' ? 3 : 4;
      stmts.push({ kind: 'verdict', verdict: { kind: 'reject' } });
      continue;
    }
    const v = ['accept', 'drop', 'return', 'continue', 'jump', 'goto'].includes(w) ? (i++, verdictWord(w)) : undefined;
    if (v) {
      stmts.push({ kind: 'verdict', verdict: v });
      continue;
    }
    if ((w === 'mark' && peek(1) === 'set') || (w === 'meta' && peek(1) === 'mark' && peek(2) === 'set')) {
      i += w === 'mark' ? 2 : 3;
      const a = next();
      if ((a === 'mark' || a === 'meta') && (a === 'mark' || next() === 'mark')) {
        // `nft list` prints the operators as `|`, `^`, `&` where kube-proxy writes the words.
        const op = OPERATOR_WORDS[next()];
        if (op === undefined) return fail(`mark ${t[i - 1]}`), undefined as never;
        stmts.push({ kind: 'mark', op, value: Number(next()) >>> 0 });
      } else {
        stmts.push({ kind: 'mark', op: 'set', value: Number(a) >>> 0 });
      }
      continue;
    }
    if (w === 'masquerade') {
      i++;
      while (['fully-random', 'random', 'persistent'].includes(peek() ?? '')) i++;
      stmts.push({ kind: 'masquerade' });
      continue;
    }
    if (w === 'dnat' || w === 'snat') {
      i++;
      if (peek() === 'ip' || peek() === 'ip6') i++;
      if (next() !== 'to') fail(`${w} without to`);
      const target = next();
      const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(target) ?? /^([^:]+)(?::(\d+))?$/.exec(target) ?? [target, target];
      if (w === 'snat') stmts.push({ kind: 'snat', ip: m[1]! });
      else stmts.push({ kind: 'dnat', ip: m[1]!, ...(m[2] ? { port: Number(m[2]) } : {}) });
      continue;
    }
    if ((w === 'update' || w === 'add') && peek(1)?.startsWith('@')) {
      const set = peek(1)!.slice(1);
      i += 2;
      if (next() !== '{') fail('set update');
      while (peek() !== '}' && i < t.length) i++;
      i++;
      stmts.push({ kind: 'update-set', set });
      continue;
    }
    if (w === 'log' || w === 'notrack') fail(`statement ${w}`);
    const e = expr();
    if (peek() === 'vmap') {
      i++;
      stmts.push({ kind: 'vmap', expr: e, map: value() });
      continue;
    }
    let mask: number | undefined;
    if (peek() === 'and' || peek() === '&') {
      i++;
      mask = Number(next()) >>> 0;
    }
    let negate = false;
    if (peek() === '!=') {
      negate = true;
      i++;
    } else if (peek() === '==') {
      i++;
    }
    const val = value();
    const [fast, fastText] = mask === undefined ? fastMatch(e, val) : [FastMatch.None, undefined];
    stmts.push({ kind: 'match', expr: e, mask, negate, value: val, fast, fastText });
  }
  return { chain, index, text, comment, stmts };
}

const OPERATOR_WORDS: Readonly<Record<string, 'or' | 'xor' | 'and'>> = {
  or: 'or', xor: 'xor', and: 'and', '|': 'or', '^': 'xor', '&': 'and',
};

/**
 * Match shapes kube-proxy writes on almost every rule, evaluated without closures (big tables
 * touch thousands of rules; every pointer followed costs): one field against one literal.
 * Each gives exactly what the general path gives (compilePart): an address part without a
 * prefix or range is equality with its canonical form, `meta l4proto` compares names, a
 * `ct state` part is decided by the world's conntrack flags.
 */
export enum FastMatch {
  None = 0,
  /** `ip saddr A` etc.: fastText is the canonical address (undefined: matches nothing). */
  IpSaddr, IpDaddr, Ip6Saddr, Ip6Daddr,
  /** `meta l4proto P`: fastText is the protocol name the packet carries. */
  L4proto,
  CtTrue, CtDnat, CtSnat, CtFalse,
}

function fastMatch(e: Expr, v: ValueRef): [FastMatch, string | undefined] {
  if (e.kind !== 'field' || v.kind !== 'literal' || v.parts.length !== 1) return [FastMatch.None, undefined];
  const spec = v.parts[0]!;
  switch (e.name) {
    case 'ip saddr': case 'ip daddr': case 'ip6 saddr': case 'ip6 daddr': {
      if (spec.includes('/') || /^([^-/]+)-([^-/]+)$/.test(spec)) return [FastMatch.None, undefined];
      const op = e.name === 'ip saddr' ? FastMatch.IpSaddr : e.name === 'ip daddr' ? FastMatch.IpDaddr
        : e.name === 'ip6 saddr' ? FastMatch.Ip6Saddr : FastMatch.Ip6Daddr;
      return [op, canonicalIP(spec)];
    }
    case 'meta l4proto':
      return [FastMatch.L4proto, PROTO_NUM[spec] ?? spec];
    case 'ct state': {
      const k = spec.toLowerCase();
      return [k === 'new' ? FastMatch.CtTrue : k === 'dnat' ? FastMatch.CtDnat : k === 'snat' ? FastMatch.CtSnat
        : FastMatch.CtFalse, undefined];
    }
    default:
      return [FastMatch.None, undefined];
  }
}

/** A key part's value as a packet yields it. */
export type Part = string | number | undefined;

/** Does one key part (from a literal or set) match the value the packet yields? Made once per
 *  part: what is fixed by the spec and field is decided here, the rest per packet. `ct state`
 *  parts read the world's conntrack (a first packet: NEW, plus DNAT/SNAT once applied). */
export function compilePart(spec: string, field: string): (actual: Part, w: World) => boolean {
  if (field === 'ct state') {
    const k = spec.toLowerCase();
    if (k === 'new') return () => true;
    if (k === 'dnat') return (_a, w) => w.dnat;
    if (k === 'snat') return (_a, w) => w.snat;
    return () => false;
  }
  const range = /^(\d+)-(\d+)$/.exec(spec);
  const lo = range ? Number(range[1]) : NaN;
  const hi = range ? Number(range[2]) : NaN;
  const n = Number(spec);
  const text = textPart(spec, field);
  return (actual) => {
    if (actual === undefined) return false;
    if (typeof actual === 'number') return range ? actual >= lo && actual <= hi : n === actual;
    return text(actual);
  };
}

/** The string-valued half of a part match (see compilePart). */
function textPart(spec: string, field: string): (actual: string) => boolean {
  if (field === 'meta l4proto') {
    const want = PROTO_NUM[spec] ?? spec;
    return (a) => want === a;
  }
  if (field.endsWith('addr')) {
    const r = /^([^-/]+)-([^-/]+)$/.exec(spec);
    if (r) return (a) => compareIPs(r[1]!, a) <= 0 && compareIPs(a, r[2]!) <= 0;
    // Compiled on first use: a malformed spec is an error when a packet reaches it.
    let m: ((ip: string) => boolean) | undefined;
    return (a) => (m ??= compileAddress(spec))(a);
  }
  if (field === 'iifname' || field === 'oifname') {
    const s = spec.replace(/^"|"$/g, '');
    if (s.endsWith('*')) {
      const prefix = s.slice(0, -1);
      return (a) => a.startsWith(prefix);
    }
    return (a) => a === s;
  }
  return (a) => spec === a;
}
