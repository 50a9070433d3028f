// Compiles one iptables rule's arguments into matches and a target, strictly: an option the
// tracer does not model is an error naming the rule, never a silent "match".

import { kdpError } from '../../errors.js';
import { canonicalIP } from '../../api/net.js';
import { addressMatches, compileAddress, type Packet } from '../packet.js';
import type { World } from '../world.js';
import type { TraceChain } from './ruleset.js';

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

export interface CompiledRule {
  readonly chain: string;
  readonly index: number;
  readonly text: string;
  readonly matches: readonly Match[];
  readonly target: Target;
  readonly comment?: string;
  /** The rule's tests in order (its `test` matches), and the product of its random matches'
   *  probabilities (1 without any): what the interpreter evaluates. */
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

function portSpec(s: string): (p: number) => boolean {
  const parts = s.split(',').map((x) => {
    const [a, b] = x.split(':');
    const lo = Number(a || 0);
    const hi = b === undefined ? lo : Number(b || 65535);
    return [lo, hi] as const;
  });
  if (parts.length === 1) {
    const [lo, hi] = parts[0]!;
    return (p) => p >= lo && p <= hi;
  }
  return (p) => parts.some(([lo, hi]) => p >= lo && p <= hi);
}

/** A test every packet passes: left out of a rule's `tests` (they are pure, so a conjunction
 *  without it decides the same). */
const ALWAYS: MatchTest = () => true;

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
  const add = (test: MatchTest) => {
    const neg = negate;
    negate = false;
    matches.push({ kind: 'test', test: neg ? (x, e) => !test(x, e) : test });
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
      case '-p': case '--protocol': { const p = val().toLowerCase(); add((x, e) => x.pkt.proto === p || (p === 'icmpv6' && x.pkt.proto === 'icmp')); break; }
      case '-s': case '--source': { const m = compileAddress(val()); add((x, e) => m(x.pkt.src)); break; }
      case '-d': case '--destination': {
        const spec = val();
        const single = /^([^/]+?)(?:\/(32|128))?$/.exec(spec);
        if (!negate && single) exactDst = canonicalIP(single[1]!);
        const m = compileAddress(spec);
        add((x, e) => m(x.pkt.dst));
        break;
      }
      case '-i': case '--in-interface': { const n = val(); add((x, e) => ifaceMatches(n, e.inIface)); break; }
      case '-o': case '--out-interface': { const n = val(); add((x, e) => ifaceMatches(n, e.outIface)); break; }
      case '-m': case '--match': { const m = val(); if (!SKIP_MODULES.has(m)) fail(`module ${m}`); break; }
      case '--dport': case '--destination-port': { const t = portSpec(val()); add((x, e) => x.pkt.proto !== 'icmp' && t(x.pkt.dport)); break; }
      case '--sport': case '--source-port': { const t = portSpec(val()); add((x, e) => x.pkt.proto !== 'icmp' && t(x.pkt.sport)); break; }
      case '--dports': { const t = portSpec(val()); add((x, e) => t(x.pkt.dport)); break; }
      case '--comment': comment = val(); negate = false; break;
      case '--mark': { const { value, mask } = markValue(val()); add((x, e) => ((x.mark & mask) >>> 0) === ((value & mask) >>> 0)); break; }
      case '--dst-type': { const t = val(); add((x, e) => LOCAL_TYPES.has(t) && e.isLocal(x.pkt.dst)); break; }
      case '--src-type': { const t = val(); add((x, e) => LOCAL_TYPES.has(t) && e.isLocal(x.pkt.src)); break; }
      case '--limit-iface-in': case '--limit-iface-out': break;
      case '--physdev-is-in': add((x, e) => e.bridged === true); break;
      case '--vaddr': { const v = val(); add((x, e) => x.ipvs !== undefined && addressMatches(v, x.ipvs.vaddr)); break; }
      case '--vport': { const v = Number(val()); add((x, e) => x.ipvs?.vport === v); break; }
      case '--vproto': { const v = val().toLowerCase(); add((x, e) => x.ipvs?.vproto === v); break; }
      case '--ctstate': case '--state': add(ctStateTest(val().split(','))); break;
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
  const tests = matches.flatMap((m) => (m.kind === 'test' && m.test !== ALWAYS ? [m.test] : []));
  const chance = matches.reduce((p, m) => (m.kind === 'random' ? p * m.probability : p), 1);
  // Every rule has the same fields (exactDst possibly undefined): one object shape keeps the
  // interpreter's property reads fast.
  return { chain, index, text, matches, tests, probability: chance, target, comment, exactDst };
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
