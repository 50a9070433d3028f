// A strict interpreter of exactly the `nft -f` text compileNetpolNftables emits: it walks the
// `forward` chain for one new connection and answers accept/drop with the rule that decided.
// Any line or expression it does not understand throws (a tracer must not guess), so the
// compiler's output is checked against the evaluator packet by packet.

import { parseIP } from '../api/net.js';

export interface SimPacket {
  readonly saddr: string;
  readonly daddr: string;
  readonly protocol: 'tcp' | 'udp' | 'sctp';
  readonly dport: number;
}

export interface SimResult {
  readonly verdict: 'accept' | 'drop';
  /** The comment of the deciding rule (or `policy accept`). */
  readonly by: string;
}

type Elem = readonly [bigint, bigint];

interface Table {
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

export function parseNetpolNft(text: string): Table {
  const t: Table = { sets: new Map(), maps: new Map(), chains: new Map() };
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

/** Evaluates one rule: its outcome when every match holds, else undefined. */
function rule(t: Table, r: string, p: SimPacket, run: (chain: string) => SimResult | undefined)
  : { out: Outcome; by: string; jumped?: SimResult } {
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
      const res = run(target);
      return { out: res?.verdict === 'drop' ? 'drop' : undefined, by: res?.by ?? comment,
        jumped: res };
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

/** Runs a new connection's first packet through the `forward` chain. */
export function simulateForward(t: Table, p: SimPacket): SimResult {
  const run = (chain: string): SimResult | undefined => {
    for (const r of t.chains.get(chain) ?? []) {
      const res = rule(t, r, p, run);
      if (res.out === 'return') return undefined;
      if (res.out === 'accept' || res.out === 'drop') return { verdict: res.out, by: res.by };
    }
    return undefined;
  };
  return run('forward') ?? { verdict: 'accept', by: 'policy accept' };
}
