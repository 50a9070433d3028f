// Compiles one iptables rule's arguments into matches and a target, strictly: an option the
// tracer does not model is an error naming the rule, never a silent "match".

import { kdpError } from '../../errors.js';
import { canonicalIP } from '../../api/net.js';
import { addressMatches, compileAddress, type Packet } from '../packet.js';
import type { World } from '../world.js';
import type { TraceChain } from './ruleset.js';
import {
  emptyFlatMatch, flatSetter, F_CT, F_DPORT, F_DST, F_MARK, F_PROTO, F_SRC, type FlatMatch,
  type FlatSetter,
} from './flat-match.js';

/** What a match needs to know besides the world (packet, mark, conntrack, IPVS): the hook's
 *  surroundings. Tests read both directly, so evaluating a rule allocates nothing. */
export interface MatchEnv {
  readonly inIface?: string;
  readonly outIface?: string;
  isLocal(ip: string): boolean;
  /** ipset membership; undefined when the tracer has no ipsets (then `--match-set` errors). */
  inSet?(name: string, flags: readonly string[], pkt: Packet): boolean;
  /** The packet entered through a bridge port (physdev, with br_netfilter). */
  readonly bridged?: boolean;
}

export type MatchTest = (x: World, env: MatchEnv) => boolean;

export type Match =
  | { kind: 'test'; test: MatchTest }
  /** `-m statistic --mode random --probability p`: matches with probability p. */
  | { kind: 'random'; probability: number; negate: boolean };

export type Target =
  | { kind: 'none' }
  | { kind: 'verdict'; verdict: 'ACCEPT' | 'DROP' | 'REJECT' }
  | { kind: 'return' }
  /** `ref`: the target chain, resolved once its table is compiled (saves a lookup per jump). */
  | { kind: 'jump'; chain: string; goto: boolean; ref?: TraceChain }
  | { kind: 'mark'; op: 'or' | 'xor' | 'set'; value: number; mask: number }
  | { kind: 'dnat'; ip: string; port?: number }
  | { kind: 'masquerade' }
  | { kind: 'snat'; ip: string }
  | { kind: 'continue' };

/** The common matches are its FlatMatch fields (flat-match.ts), left out of `tests`; kept on
 *  the rule itself so that testing them reads one object. */
export interface CompiledRule extends Readonly<FlatMatch> {
  readonly chain: string;
  readonly index: number;
  readonly text: string;
  readonly matches: readonly Match[];
  readonly target: Target;
  readonly comment?: string;
  /** The rule's tests in order (its `test` matches), and the product of its random matches'
   *  probabilities (1 without any): what the interpreter evaluates, after the flat fields. */
  readonly tests: readonly MatchTest[];
  readonly probability: number;
  /** Set when the rule only matches one destination address (`-d IP`): used to index chains. */
  readonly exactDst?: string;
}

const LOCAL_TYPES = new Set(['LOCAL']);
const SKIP_MODULES = new Set(['tcp', 'udp', 'sctp', 'icmp', 'icmp6', 'comment', 'mark', 'addrtype', 'conntrack',
  'statistic', 'recent', 'multiport', 'set', 'nfacct', 'state', 'physdev', 'ipvs']);

function num(s: string): number {
  return s.startsWith('0x') ? parseInt(s, 16) : Number(s);
}

function markValue(s: string): { value: number; mask: number } {
  const [v, m] = s.split('/');
  return { value: num(v!) >>> 0, mask: m === undefined ? 0xffffffff : num(m) >>> 0 };
}

function portRanges(s: string): (readonly [number, number])[] {
  return s.split(',').map((x) => {
    const [a, b] = x.split(':');
    const lo = Number(a || 0);
    const hi = b === undefined ? lo : Number(b || 65535);
    return [lo, hi] as const;
  });
}

function portSpec(parts: readonly (readonly [number, number])[]): (p: number) => boolean {
  if (parts.length === 1) {
    const [lo, hi] = parts[0]!;
    return (p) => p >= lo && p <= hi;
  }
  return (p) => parts.some(([lo, hi]) => p >= lo && p <= hi);
}

/** A test every packet passes: left out of a rule's `tests` (they are pure, so a conjunction
 *  without it decides the same). */
const ALWAYS: MatchTest = () => true;

const NO_TESTS: readonly MatchTest[] = [];

/** `--ctstate A,B`: a first packet is NEW, plus DNAT/SNAT once applied (decided once here). */
function ctStateTest(states: readonly string[]): MatchTest {
  if (states.includes('NEW')) return ALWAYS;
  const dnat = states.includes('DNAT');
  const snat = states.includes('SNAT');
  return (x) => (dnat && x.dnat) || (snat && x.snat);
}

export function compileRule(
  chain: string,
  index: number,
  args: readonly string[],
  text: string,
  chains: ReadonlySet<string>,
): CompiledRule {
  const fail = (why: string): never => {
    throw kdpError('KDP_TRACE', `unsupported iptables rule (${why}): -A ${chain} ${text}`);
  };
  const matches: Match[] = [];
  let target: Target = { kind: 'none' };
  let comment: string | undefined;
  let negate = false;
  let probability: number | undefined;
  let mode: string | undefined;
  let recent: 'rcheck' | 'set' | undefined;
  let jumpTo: string | undefined;
  let goto = false;
  const tOpts = new Map<string, string>();
  let exactDst: string | undefined;
  // The flat form of a test, if it has one (flat-match.ts), keyed by the test as added.
  const flats = new Map<MatchTest, FlatSetter>();
  const add = (test: MatchTest, flat?: (neg: boolean) => FlatSetter) => {
    const neg = negate;
    negate = false;
    const t: MatchTest = neg ? (x, e) => !test(x, e) : test;
    matches.push({ kind: 'test', test: t });
    if (flat && t !== ALWAYS) flats.set(t, flat(neg));
  };
  // `-s IP` / `-d IP` (no prefix length) compare canonical strings, as compileAddress does.
  const address = (spec: string, bit: typeof F_SRC | typeof F_DST) => {
    const canon = spec.includes('/') ? undefined : canonicalIP(spec);
    if (!canon) return undefined;
    return (neg: boolean) => flatSetter(bit, (f) => {
      if (bit === F_SRC) [f.src, f.srcNeg] = [canon, neg];
      else [f.dst, f.dstNeg] = [canon, neg];
    });
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const val = () => {
      const v = args[++i];
      if (v === undefined) fail(`${a} needs a value`);
      return v!;
    };
    switch (a) {
      case '!': negate = true; break;
      case '-p': case '--protocol': {
        const p = val().toLowerCase();
        const alt = p === 'icmpv6' ? 'icmp' : p;
        add((x, e) => x.pkt.proto === p || (p === 'icmpv6' && x.pkt.proto === 'icmp'),
          (neg) => flatSetter(F_PROTO, (f) => { [f.proto, f.protoAlt, f.protoNeg] = [p, alt, neg]; }));
        break;
      }
      case '-s': case '--source': {
        const spec = val();
        const m = compileAddress(spec);
        add((x, e) => m(x.pkt.src), address(spec, F_SRC));
        break;
      }
      case '-d': case '--destination': {
        const spec = val();
        const single = /^([^/]+?)(?:\/(32|128))?$/.exec(spec);
        if (!negate && single) exactDst = canonicalIP(single[1]!);
        const m = compileAddress(spec);
        add((x, e) => m(x.pkt.dst), address(spec, F_DST));
        break;
      }
      case '-i': case '--in-interface': { const n = val(); add((x, e) => ifaceMatches(n, e.inIface)); break; }
      case '-o': case '--out-interface': { const n = val(); add((x, e) => ifaceMatches(n, e.outIface)); break; }
      case '-m': case '--match': { const m = val(); if (!SKIP_MODULES.has(m)) fail(`module ${m}`); break; }
      case '--dport': case '--destination-port': {
        const ranges = portRanges(val());
        const t = portSpec(ranges);
        const [lo, hi] = ranges[0]!;
        add((x, e) => x.pkt.proto !== 'icmp' && t(x.pkt.dport), ranges.length !== 1 ? undefined
          : (neg) => flatSetter(F_DPORT, (f) => { [f.dportLo, f.dportHi, f.dportNeg] = [lo, hi, neg]; }));
        break;
      }
      case '--sport': case '--source-port': {
        const t = portSpec(portRanges(val()));
        add((x, e) => x.pkt.proto !== 'icmp' && t(x.pkt.sport));
        break;
      }
      case '--dports': { const t = portSpec(portRanges(val())); add((x, e) => t(x.pkt.dport)); break; }
      case '--comment': {
        // Dumps from kube-proxy's fake iptables (its unit tests) leave multi-word comments
        // unquoted (`ns1/svc1:p80 cluster IP`, `… -> 10.180.0.1:80`); upstream's parser skips
        // the extra words. They are taken as the comment's: a real argument is an option.
        comment = val();
        while (i + 1 < args.length && !/^(!|--?[A-Za-z])/.test(args[i + 1]!)) comment += ` ${args[++i]}`;
        negate = false;
        break;
      }
      case '--mark': {
        const { value, mask } = markValue(val());
        const v = (value & mask) >>> 0;
        add((x, e) => ((x.mark & mask) >>> 0) === ((value & mask) >>> 0),
          (neg) => flatSetter(F_MARK, (f) => { [f.markValue, f.markMask, f.markNeg] = [v, mask, neg]; }));
        break;
      }
      case '--dst-type': { const t = val(); add((x, e) => LOCAL_TYPES.has(t) && e.isLocal(x.pkt.dst)); break; }
      case '--src-type': { const t = val(); add((x, e) => LOCAL_TYPES.has(t) && e.isLocal(x.pkt.src)); break; }
      case '--limit-iface-in': case '--limit-iface-out': break;
      case '--physdev-is-in': add((x, e) => e.bridged === true); break;
      case '--vaddr': { const v = val(); add((x, e) => x.ipvs !== undefined && addressMatches(v, x.ipvs.vaddr)); break; }
      case '--vport': { const v = Number(val()); add((x, e) => x.ipvs?.vport === v); break; }
      case '--vproto': { const v = val().toLowerCase(); add((x, e) => x.ipvs?.vproto === v); break; }
      case '--ctstate': case '--state': {
        const states = val().split(',');
        const [dnat, snat] = [states.includes('DNAT'), states.includes('SNAT')];
        // With NEW the test always holds (a first packet): no field, nothing to test.
        add(ctStateTest(states), states.includes('NEW') ? undefined
          : (neg) => flatSetter(F_CT, (f) => { [f.ctDnat, f.ctSnat, f.ctNeg] = [dnat, snat, neg]; }));
        break;
      }
      case '--mode': mode = val(); break;
      case '--probability': probability = Number(val()); break;
      case '--rcheck': recent = 'rcheck'; negate = false; break;
      case '--set': recent = 'set'; break;
      case '--name': case '--mask': case '--seconds': case '--nfacct-name': val(); break;
      case '--reap': case '--rsource': case '--rdest': break;
      case '--match-set': {
        const name = val();
        const flags = val().split(',');
        add((x, e) => {
          if (!e.inSet) return fail(`ipset ${name} is unknown to the tracer`);
          return e.inSet(name, flags, x.pkt);
        });
        break;
      }
      case '-j': case '--jump': jumpTo = val(); break;
      case '-g': case '--goto': jumpTo = val(); goto = true; break;
      case '--to-destination': case '--or-mark': case '--xor-mark': case '--set-xmark': case '--set-mark':
      case '--to-source': case '--reject-with':
        tOpts.set(a, val()); break;
      case '--random-fully': case '--random': case '--persistent': break;
      default: fail(`option ${a}`);
    }
  }
  if (mode !== undefined || probability !== undefined) {
    if (mode !== 'random' || probability === undefined || !(probability >= 0 && probability <= 1)) fail('statistic mode');
    matches.push({ kind: 'random', probability: probability!, negate: false });
  }
  if (recent === 'rcheck') {
    // A fresh client has no entry in the affinity list: the check never matches.
    matches.push({ kind: 'test', test: () => false });
  }
  if (jumpTo !== undefined) target = compileTarget(jumpTo, goto, tOpts, chains, fail);
  const flat = emptyFlatMatch();
  // A test that can throw (an ipset the tracer lacks, a bad --vaddr) must run in its place:
  // such rules keep every test, in order.
  const ordered = args.includes('--match-set') || args.includes('--vaddr');
  const kept = matches.flatMap((m) => {
    if (m.kind !== 'test' || m.test === ALWAYS) return [];
    const set = ordered ? undefined : flats.get(m.test);
    return set && set(flat) ? [] : [m.test];
  });
  // Most rules keep no test: they share one empty list (one less object to read per rule).
  const tests = kept.length === 0 ? NO_TESTS : kept;
  const chance = matches.reduce((p, m) => (m.kind === 'random' ? p * m.probability : p), 1);
  // Every rule has the same fields (exactDst possibly undefined): one object shape keeps the
  // interpreter's property reads fast.
  const f = flat;
  // Spelled out, the tested fields first: one shape, every field in the object.
  return {
    has: f.has, proto: f.proto, protoAlt: f.protoAlt, protoNeg: f.protoNeg, src: f.src, srcNeg: f.srcNeg,
    dst: f.dst, dstNeg: f.dstNeg, dportLo: f.dportLo, dportHi: f.dportHi, dportNeg: f.dportNeg,
    markValue: f.markValue, markMask: f.markMask, markNeg: f.markNeg, ctDnat: f.ctDnat, ctSnat: f.ctSnat,
    ctNeg: f.ctNeg, tests, probability: chance, target, chain, index, text, matches, comment, exactDst,
  };
}

function ifaceMatches(spec: string, iface: string | undefined): boolean {
  if (iface === undefined) return false;
  return spec.endsWith('+') ? iface.startsWith(spec.slice(0, -1)) : iface === spec;
}

function compileTarget(
  to: string,
  goto: boolean,
  opts: Map<string, string>,
  chains: ReadonlySet<string>,
  fail: (w: string) => never,
): Target {
  switch (to) {
    case 'ACCEPT': case 'DROP': case 'REJECT': return { kind: 'verdict', verdict: to };
    case 'RETURN': return { kind: 'return' };
    case 'MASQUERADE': return { kind: 'masquerade' };
    case 'LOG': case 'NFLOG': case 'TRACE': case 'CT': return { kind: 'continue' };
    case 'MARK': {
      for (const [k, op] of [['--or-mark', 'or'], ['--xor-mark', 'xor'], ['--set-xmark', 'set'], ['--set-mark', 'set']] as const) {
        const v = opts.get(k);
        if (v === undefined) continue;
        const { value, mask } = markValue(v);
        // The kernel computes (mark & ~mask) ^ value (xt_MARK); `--set-mark V/M` is stored by
        // iptables as value V, mask V|M. iptables-save prints every MARK as `--set-xmark V/M`
        // (`--xor-mark 0x4000` as `--set-xmark 0x4000/0x0`: it clears the bit).
        if (k === '--set-mark') return { kind: 'mark', op, value, mask: (mask | value) >>> 0 };
        if (op === 'set') return { kind: 'mark', op, value, mask };
        return { kind: 'mark', op, value, mask: 0xffffffff };
      }
      return fail('MARK without a mark option');
    }
    case 'DNAT': {
      const d = opts.get('--to-destination') ?? fail('DNAT without --to-destination');
      const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(d) ?? /^([^:]+)(?::(\d+))?$/.exec(d) ?? /^(.+)$/.exec(d);
      return { kind: 'dnat', ip: m![1]!, ...(m![2] ? { port: Number(m![2]) } : {}) };
    }
    case 'SNAT': return { kind: 'snat', ip: (opts.get('--to-source') ?? fail('SNAT without --to-source')).split(':')[0]! };
    default:
      // Anything that is not a chain of this table is a kernel target we do not model.
      if (!chains.has(to)) return fail(`target ${to}`);
      return { kind: 'jump', chain: to, goto };
  }
}
