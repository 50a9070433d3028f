// `kdp diff` of two `inet kdp-netpol` tables (the compiler's `nft -f` text: a node's table at
// two moments, or two files): which pod pairs and ports a policy change opened or closed.
//
// By meaning, not by text: both tables are walked by the strict interpreter (nft-sim) for every
// class of packet either table can tell apart, and each cell whose verdict differs is reported
// with what decided it before and after (the rule comments name the policy and rule, or the
// isolating policies of a drop), attributed to the policies whose part in the decision changed.
// Addresses and ports are cut into segments at every boundary any rule, set or map of either
// table draws, so one representative per segment is exact (every rule treats a segment alike).
// Addresses are named after pods from the tables' own verdict maps (the node's isolated pods),
// from `pods` when the caller knows the cluster, and after the node's own IPs.

import { formatIP, parseIP, type IPFamily } from '../api/net.js';
import { kdpError } from '../errors.js';
import { parseIsolationNote } from '../netpol/nftables.js';
import {
  parseNetpolNft, simulateForwardSteps, type NetpolTable, type SimPacket,
} from '../netpol/nft-sim.js';

export interface NetpolSide {
  readonly label: string;
  readonly text: string;
}

export interface NetpolCellChange {
  readonly kind: 'opened' | 'closed';
  readonly from: string;
  readonly to: string;
  /** `TCP/80`, `UDP/53-54`, `TCP/1-79` (a segment of ports treated alike). */
  readonly ports: string;
  readonly before: string;
  readonly after: string;
  /** The policies whose part in the decision changed (what opened or closed it). */
  readonly policies: readonly string[];
}

export interface NetpolDiff {
  readonly a: string;
  readonly b: string;
  readonly policiesAdded: readonly string[];
  readonly policiesRemoved: readonly string[];
  readonly changes: readonly NetpolCellChange[];
  /** Packets walked through each table. */
  readonly probes: number;
}

type Fam = 'v4' | 'v6';
const MAX: Record<Fam, bigint> = { v4: (1n << 32n) - 1n, v6: (1n << 128n) - 1n };
const FAMILY: Record<Fam, IPFamily> = { v4: 'IPv4', v6: 'IPv6' };
const PROTOS = ['tcp', 'udp', 'sctp'] as const;

function parseSide(s: NetpolSide): NetpolTable {
  try {
    return parseNetpolNft(s.text);
  } catch (e) {
    throw kdpError('KDP_PARSE', `${s.label}: not a kdp-netpol table as kdp compiles it: ` +
      `${(e as Error).message}`);
  }
}

const famOf = (name: string): Fam => (name.endsWith('-v6') ? 'v6' : 'v4');
const ipText = (v: bigint, f: Fam): string => formatIP({ family: FAMILY[f], value: v } as never);

/** Every policy a table mentions: in rule comments, drop notes and peer set names. */
function policiesOf(t: NetpolTable): Set<string> {
  const out = new Set<string>();
  for (const rules of t.chains.values()) {
    for (const r of rules) for (const p of policiesIn(/comment "(.*)"$/.exec(r)?.[1] ?? '')) out.add(p);
  }
  for (const name of t.sets.keys()) {
    const m = /^peers-([^/]+\/[^/]+)\//.exec(name);
    if (m) out.add(m[1]!);
  }
  return out;
}

/** The policies a decision's text names (`x/p ingress rule 0`, `x/a isolated … by x/p, y/q`). */
function policiesIn(by: string): string[] {
  const rule = /^(\S+) (?:ingress|egress) rule \d+$/.exec(by);
  if (rule) return [rule[1]!];
  return parseIsolationNote(by)?.policies.filter((p) => !p.startsWith('+')) ?? [];
}

interface Space {
  readonly addr: Record<Fam, bigint[]>;
  readonly ports: Record<string, number[]>;
  readonly names: Record<Fam, Map<bigint, string>>;
  readonly egress: Record<Fam, Set<bigint>>;
  readonly ingress: Record<Fam, Set<bigint>>;
}

function collect(ts: readonly NetpolTable[], pods: ReadonlyMap<string, string>): Space {
  const cut: Record<Fam, Set<bigint>> = { v4: new Set([0n]), v6: new Set([0n]) };
  const point = (f: Fam, lo: bigint, hi: bigint): void => {
    cut[f].add(lo);
    if (hi < MAX[f]) cut[f].add(hi + 1n);
  };
  // Every protocol, whole range at least: a rule without ports matches them all.
  const ports: Record<string, Set<number>> = { tcp: new Set([1]), udp: new Set([1]), sctp: new Set([1]) };
  const names: Record<Fam, Map<bigint, string>> = { v4: new Map(), v6: new Map() };
  const egress: Record<Fam, Set<bigint>> = { v4: new Set(), v6: new Set() };
  const ingress: Record<Fam, Set<bigint>> = { v4: new Set(), v6: new Set() };
  for (const [ip, name] of pods) {
    const p = parseIP(ip);
    if (!p) continue;
    const f: Fam = p.family === 'IPv6' ? 'v6' : 'v4';
    names[f].set(p.value, name);
    point(f, p.value, p.value);
  }
  for (const t of ts) {
    for (const [name, es] of t.sets) {
      for (const [lo, hi] of es) point(famOf(name), lo, hi);
      if (name.startsWith('node-ips-')) for (const [lo] of es) names[famOf(name)].set(lo, 'the node');
    }
    for (const [name, m] of t.maps) {
      const f = famOf(name);
      for (const [k, chain] of m) {
        point(f, k, k);
        (name.startsWith('egress-') ? egress : ingress)[f].add(k);
        const pod = /^(?:egress|ingress)-(.+)$/.exec(chain)?.[1];
        if (pod && !names[f].has(k)) names[f].set(k, pod);
      }
    }
    for (const rules of t.chains.values()) {
      for (const r of rules) {
        for (const m of r.matchAll(/\{ ([^}]*) \}/g)) {
          for (const x of m[1]!.split(',').map((s) => s.trim()).filter(Boolean)) {
            const [a, z] = x.split('-').map((s) => parseIP(s));
            if (a) point(a.family === 'IPv6' ? 'v6' : 'v4', a.value, (z ?? a).value);
          }
        }
        const pm = /meta l4proto (tcp|udp|sctp)(?: th dport (\d+)(?:-(\d+))?)?/.exec(r);
        if (pm) {
          const set = ports[pm[1]!]!;
          set.add(1);
          if (pm[2]) {
            set.add(Number(pm[2]));
            if (Number(pm[3] ?? pm[2]) < 65535) set.add(Number(pm[3] ?? pm[2]) + 1);
          }
        }
      }
    }
  }
  const sorted = (s: Set<bigint>) => [...s].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  return {
    addr: { v4: sorted(cut.v4), v6: sorted(cut.v6) },
    ports: Object.fromEntries(PROTOS.map((p) => [p, [...ports[p]!].sort((x, y) => x - y)])),
    names, egress, ingress,
  };
}

function addrLabel(sp: Space, f: Fam, i: number): string {
  const lo = sp.addr[f][i]!;
  const hi = i + 1 < sp.addr[f].length ? sp.addr[f][i + 1]! - 1n : MAX[f];
  if (lo === hi) {
    const n = sp.names[f].get(lo);
    return n ? `${n}${n === 'the node' ? ` ${ipText(lo, f)}` : ''}` : ipText(lo, f);
  }
  return `${ipText(lo, f)}-${ipText(hi, f)}`;
}

/** What decided a packet: the allowing rules of each direction, or the drop's note. */
interface Decision {
  readonly allowed: boolean;
  readonly text: string;
  /** Policies whose rules allowed it (per direction walked). */
  readonly allowBy: readonly string[];
  /** The isolating policies a drop names. */
  readonly isolatedBy: readonly string[];
}

function explain(t: NetpolTable, p: SimPacket): Decision {
  const { result, steps } = simulateForwardSteps(t, p);
  if (result.verdict === 'drop') {
    const d = steps.find((s) => s.outcome === 'drop');
    return { allowed: false, text: `denied: ${d?.by ?? result.by}`,
      allowBy: steps.filter((s) => s.outcome === 'return').flatMap((s) => policiesIn(s.by)),
      isolatedBy: policiesIn(d?.by ?? '') };
  }
  const parts = steps.map((s) => (s.by === 'end of chain' ? `${s.chain} ran out` : s.by));
  return { allowed: true, text: parts.length ? `allowed by ${parts.join(' and ')}`
    : 'allowed: no policy selects either pod here',
  allowBy: steps.flatMap((s) => policiesIn(s.by)), isolatedBy: [] };
}

/**
 * Which policy change explains a flipped cell. Opened: the policies that allow it now and did
 * not before, else the ones whose isolation went away. Closed: the policies isolating it now
 * that did not allow it before (new isolation), else the ones that allowed it (their rules
 * changed).
 */
function attribute(x: Decision, y: Decision): string[] {
  const minus = (p: readonly string[], q: readonly string[]) => p.filter((v) => !q.includes(v));
  const pick = y.allowed
    ? (minus(y.allowBy, x.allowBy).length ? minus(y.allowBy, x.allowBy) : x.isolatedBy)
    : (minus(y.isolatedBy, x.allowBy).length ? minus(y.isolatedBy, x.allowBy) : x.allowBy);
  return [...new Set(pick)].sort();
}

export function diffNetpolTables(a: NetpolSide, b: NetpolSide,
  pods: ReadonlyMap<string, string> = new Map()): NetpolDiff {
  const ta = parseSide(a);
  const tb = parseSide(b);
  const pa = policiesOf(ta);
  const pb = policiesOf(tb);
  const sp = collect([ta, tb], pods);
  const changes: NetpolCellChange[] = [];
  let probes = 0;
  for (const f of ['v4', 'v6'] as const) {
    const cuts = sp.addr[f];
    const index = new Map(cuts.map((v, i) => [v, i]));
    const pairs = new Set<string>();
    for (const s of sp.egress[f]) for (let d = 0; d < cuts.length; d++) pairs.add(`${index.get(s)} ${d}`);
    for (const d of sp.ingress[f]) for (let s = 0; s < cuts.length; s++) pairs.add(`${s} ${index.get(d)}`);
    for (const pair of [...pairs].sort()) {
      const [si, di] = pair.split(' ').map(Number) as [number, number];
      if (si === di) continue;
      const saddr = ipText(cuts[si]!, f);
      const daddr = ipText(cuts[di]!, f);
      for (const proto of Object.keys(sp.ports)) {
        const ps = sp.ports[proto]!;
        let run: { lo: number; change: Omit<NetpolCellChange, 'ports'> } | undefined;
        const flush = (hi: number): void => {
          if (!run) return;
          const P = proto.toUpperCase();
          changes.push({ ...run.change, ports: run.lo === hi ? `${P}/${hi}` : `${P}/${run.lo}-${hi}` });
          run = undefined;
        };
        for (const lo of ps) {
          const pkt: SimPacket = { saddr, daddr, protocol: proto as SimPacket['protocol'], dport: lo };
          const x = explain(ta, pkt);
          const y = explain(tb, pkt);
          probes++;
          if (x.allowed === y.allowed) { flush(lo - 1); continue; }
          const change = { kind: y.allowed ? 'opened' as const : 'closed' as const,
            from: addrLabel(sp, f, si), to: addrLabel(sp, f, di), before: x.text, after: y.text,
            policies: attribute(x, y) };
          if (run && JSON.stringify(run.change) === JSON.stringify(change)) continue;
          flush(lo - 1);
          run = { lo, change };
        }
        flush(65535);
      }
    }
  }
  return { a: a.label, b: b.label, probes, changes,
    policiesAdded: [...pb].filter((p) => !pa.has(p)).sort(),
    policiesRemoved: [...pa].filter((p) => !pb.has(p)).sort() };
}

export function renderNetpolDiff(d: NetpolDiff): string {
  const lines = [`NetworkPolicy table: ${d.a} → ${d.b}`];
  if (d.policiesAdded.length) lines.push(`policies added: ${d.policiesAdded.join(', ')}`);
  if (d.policiesRemoved.length) lines.push(`policies removed: ${d.policiesRemoved.join(', ')}`);
  if (d.changes.length === 0) {
    lines.push('no pod pair or port opened or closed');
    return `${lines.join('\n')}\n`;
  }
  const groups = new Map<string, NetpolCellChange[]>();
  for (const c of d.changes) {
    const k = c.policies.join(', ') || '(no policy named)';
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k)!.push(c);
  }
  for (const [k, cs] of [...groups].sort(([x], [y]) => x.localeCompare(y))) {
    const opened = cs.filter((c) => c.kind === 'opened').length;
    lines.push('', `${k}: opened ${opened}, closed ${cs.length - opened}`);
    for (const c of cs) {
      lines.push(`  ${c.kind === 'opened' ? '+ opened' : '- closed'} ${c.from} → ${c.to} ${c.ports}`,
        `      before: ${c.before}`, `      after:  ${c.after}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
