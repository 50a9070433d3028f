// A strict interpreter of exactly the `nft -f` text compileNetpolNftables emits: it walks the
// `forward` chain for one new connection and answers accept/drop with the rule that decided.
// Any line or expression it does not understand throws (a tracer must not guess), so the
// compiler's output is checked against the evaluator packet by packet.

import { parseIP } from '../api/net.js';

export interface SimPacket {
  readonly saddr: string;
  readonly daddr: string;
  /** icmp matches only rules without ports (no `meta l4proto`). */
  readonly protocol: 'tcp' | 'udp' | 'sctp' | 'icmp';
  readonly dport: number;
}

export interface SimResult {
  readonly verdict: 'accept' | 'drop';
  /** The comment of the deciding rule (or `policy accept`). */
  readonly by: string;
}

type Elem = readonly [bigint, bigint];

export interface NetpolTable {
  sets: Map<string, Elem[]>;
  maps: Map<string, Map<bigint, string>>;
  chains: Map<string, string[]>;
}

const ipv = (s: string): bigint => {
  const p = parseIP(s);
  if (!p) throw new Error(`nft-sim: bad address ${s}`);
  return p.value;
};

function parseElems(body: string): Elem[] {
  return body.split(',').map((x) => x.trim()).filter(Boolean).map((x) => {
    const [a, b] = x.split('-');
    return [ipv(a!), ipv(b ?? a!)] as const;
  });
}

export function parseNetpolNft(text: string): NetpolTable {
  const t: NetpolTable = { sets: new Map(), maps: new Map(), chains: new Map() };
  const P = 'inet kdp-netpol';
  for (const line of text.split('\n')) {
    if (!line || /^(add|delete) table /.test(line)) continue;
    let m: RegExpExecArray | null;
    if ((m = new RegExp(`^add chain ${P} (\\S+)`).exec(line))) t.chains.set(m[1]!, []);
    else if ((m = new RegExp(`^add set ${P} (\\S+) `).exec(line))) t.sets.set(m[1]!, []);
    else if ((m = new RegExp(`^add map ${P} (\\S+) `).exec(line))) t.maps.set(m[1]!, new Map());
    else if ((m = new RegExp(`^add element ${P} (\\S+) \\{ (.*) \\}$`).exec(line))) {
      const [name, body] = [m[1]!, m[2]!];
      if (t.maps.has(name)) {
        for (const e of body.split(', ')) {
          const [k, v] = e.split(' : jump ');
          t.maps.get(name)!.set(ipv(k!), v!);
        }
      } else if (t.sets.has(name)) t.sets.get(name)!.push(...parseElems(body));
      else throw new Error(`nft-sim: element for unknown ${name}`);
    } else if ((m = new RegExp(`^add rule ${P} (\\S+) (.*)$`).exec(line))) {
      const c = t.chains.get(m[1]!);
      if (!c) throw new Error(`nft-sim: rule in unknown chain ${m[1]}`);
      c.push(m[2]!);
    } else throw new Error(`nft-sim: cannot read ${line}`);
  }
  return t;
}

const inElems = (es: readonly Elem[], v: bigint): boolean => es.some(([a, b]) => v >= a && v <= b);

type Outcome = 'accept' | 'drop' | 'return' | undefined;

/** One per-pod chain a verdict map sent the packet to, and how that chain ended. */
export interface SimStep {
  /** The verdict map (`egress-pods-v4`, `ingress-pods-v6`, ...). */
  readonly map: string;
  readonly chain: string;
  /** `return`: allowed (or the chain ran out); `drop`: denied; `accept`: ends the hook. */
  readonly outcome: 'accept' | 'drop' | 'return';
  /** 1-based index of the deciding rule in `chain` (absent when the chain ran out). */
  readonly rule?: number;
  /** That rule's comment (`x/allow egress rule 0`, `x/a isolated for ingress by x/deny`). */
  readonly by: string;
}

interface ChainEnd { readonly out: 'accept' | 'drop' | 'return'; readonly by: string;
  readonly rule?: number }

/** Evaluates one rule: its outcome when every match holds, else undefined. */
function rule(t: NetpolTable, r: string, p: SimPacket, jump: (map: string, chain: string) => ChainEnd)
  : { out: Outcome; by: string } {
  const comment = /comment "(.*)"$/.exec(r)?.[1] ?? r;
  let rest = r.replace(/ ?comment ".*"$/, '').trim();
  const fam = (a: string): boolean => (a.includes(':') ? 'ip6' : 'ip') === rest.split(' ')[0];
  for (;;) {
    let m: RegExpExecArray | null;
    if (rest === 'accept' || rest === 'drop' || rest === 'return') {
      return { out: rest, by: comment };
    }
    if (rest === 'ct state established,related accept') {
      return { out: undefined, by: comment }; // a new connection: never established
    }
    if ((m = /^(ip6?) (saddr|daddr) vmap @(\S+)$/.exec(rest))) {
      const a = m[2] === 'saddr' ? p.saddr : p.daddr;
      if (!fam(a)) return { out: undefined, by: comment };
      const target = t.maps.get(m[3]!)?.get(ipv(a));
      if (!target) return { out: undefined, by: comment };
      const res = jump(m[3]!, target);
      // A jumped-to chain's `return` (or end) resumes here; accept/drop end the hook.
      return { out: res.out === 'return' ? undefined : res.out, by: res.by };
    }
    if ((m = /^(ip6?) (saddr|daddr) (@(\S+)|\{ ([^}]*) \}) (.*)$/.exec(rest))) {
      const a = m[2] === 'saddr' ? p.saddr : p.daddr;
      if (!fam(a)) return { out: undefined, by: comment };
      const es = m[4] ? t.sets.get(m[4]) : parseElems(m[5]!);
      if (!es) throw new Error(`nft-sim: unknown set ${m[4]}`);
      if (!inElems(es, ipv(a))) return { out: undefined, by: comment };
      rest = m[6]!;
      continue;
    }
    if ((m = /^meta l4proto (tcp|udp|sctp) (.*)$/.exec(rest))) {
      if (m[1] !== p.protocol) return { out: undefined, by: comment };
      rest = m[2]!;
      continue;
    }
    if ((m = /^th dport (\d+)(?:-(\d+))? (.*)$/.exec(rest))) {
      const lo = Number(m[1]);
      const hi = m[2] ? Number(m[2]) : lo;
      if (p.dport < lo || p.dport > hi) return { out: undefined, by: comment };
      rest = m[3]!;
      continue;
    }
    throw new Error(`nft-sim: cannot evaluate "${rest}"`);
  }
}

/** Runs a new connection's first packet through the `forward` chain; `steps` lists every
 *  per-pod chain a verdict map jumped to, in order, with the rule that ended it. */
export function simulateForwardSteps(t: NetpolTable, p: SimPacket)
  : { result: SimResult; steps: SimStep[] } {
  const steps: SimStep[] = [];
  const run = (chain: string): ChainEnd => {
    const rules = t.chains.get(chain);
    if (!rules) throw new Error(`nft-sim: jump to unknown chain ${chain}`);
    for (let i = 0; i < rules.length; i++) {
      const res = rule(t, rules[i]!, p, jump);
      if (res.out) return { out: res.out, by: res.by, rule: i + 1 };
    }
    return { out: 'return', by: 'end of chain' };
  };
  const jump = (map: string, chain: string): ChainEnd => {
    const end = run(chain);
    steps.push({ map, chain, outcome: end.out, by: end.by,
      ...(end.rule === undefined || end.by === 'end of chain' ? {} : { rule: end.rule }) });
    return end;
  };
  const base = run('forward');
  const result: SimResult = base.out === 'return'
    ? { verdict: 'accept', by: 'policy accept' } : { verdict: base.out, by: base.by };
  return { result, steps };
}

/** Runs a new connection's first packet through the `forward` chain. */
export function simulateForward(t: NetpolTable, p: SimPacket): SimResult {
  return simulateForwardSteps(t, p).result;
}
