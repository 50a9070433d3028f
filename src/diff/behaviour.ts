// The behaviour diff: probe packets to every service address found in either table (ClusterIPs,
// external and LoadBalancer IPs, NodePorts on each node IP), from a pod, the node and an
// outside client, traced over both tables; only flows whose outcome differs are reported.
// Each table is compiled once (buildFilter) and reused for every probe.

import { buildFilter } from '../trace/offline.js';
import { DEFAULT_SPORT, type Packet } from '../trace/packet.js';
import { foldArrivals, type TraceResult } from '../trace/result.js';
import type { NodeFilter, Topology } from '../trace/topology.js';
import { walk } from '../trace/walk.js';
import { parseSide, type ParsedSide } from './load.js';
import { quickTargets } from './quick-targets.js';
import type { LoadedTable, ProbeTarget } from './types.js';

export interface BehaviourOptions {
  readonly nodeIPs: readonly string[];
  readonly podCIDRs: readonly string[];
}

export interface Probe {
  readonly source: string;
  readonly sourceKind: 'pod' | 'node' | 'outside';
  readonly dst: string;
  readonly dport: number;
  readonly proto: ProbeTarget['proto'];
  /** What the address is (`ClusterIP`, `NodePort`…). */
  readonly target: ProbeTarget['kind'];
}

export interface FlowDifference {
  readonly probe: Probe;
  readonly before: string;
  readonly after: string;
}

export interface BehaviourResult {
  readonly probes: number;
  readonly differences: FlowDifference[];
  /** Why some addresses were not probed (e.g. NodePorts with no node IP known). */
  readonly notes: string[];
}

const OUTSIDE = { v4: '198.18.0.9', v6: '2001:db8:ffff::9' };
const DEFAULT_POD_CIDRS = ['10.244.0.0/24', 'fd00:10:244::/64'];

const isV6 = (ip: string) => ip.includes(':');

function podSource(cidrs: readonly string[], v6: boolean): string | undefined {
  const c = [...cidrs, ...DEFAULT_POD_CIDRS].find((x) => isV6(x) === v6);
  if (!c) return undefined;
  const base = c.split('/')[0]!;
  if (!v6) return base.replace(/\.\d+$/, '.5');
  return base.endsWith('::') ? `${base}5` : `${base}::5`;
}

export function buildProbes(targets: readonly ProbeTarget[], opts: BehaviourOptions):
  { probes: Probe[]; notes: string[] } {
  const seen = new Set<string>();
  const probes: Probe[] = [];
  const notes: string[] = [];
  const add = (t: ProbeTarget, dst: string) => {
    const v6 = isV6(dst);
    const sources: [Probe['sourceKind'], string | undefined][] = [
      ['pod', podSource(opts.podCIDRs, v6)],
      ['node', opts.nodeIPs.find((ip) => isV6(ip) === v6)],
      ['outside', v6 ? OUTSIDE.v6 : OUTSIDE.v4],
    ];
    for (const [sourceKind, source] of sources) {
      if (!source) continue;
      const key = `${source}|${dst}|${t.port}|${t.proto}`;
      if (seen.has(key)) continue;
      seen.add(key);
      probes.push({ source, sourceKind, dst, dport: t.port, proto: t.proto, target: t.kind });
    }
  };
  let nodePortsSkipped = 0;
  // A table serves one family: NodePorts are probed on the node IPs of the families its
  // service addresses have (all node IPs when it has none).
  const families = new Set(targets.filter((t) => t.kind !== 'nodeport').map((t) => isV6(t.ip)));
  const nodeIPs = opts.nodeIPs.filter((ip) => families.size === 0 || families.has(isV6(ip)));
  for (const t of targets) {
    if (t.kind !== 'nodeport') add(t, t.ip);
    else if (nodeIPs.length === 0) nodePortsSkipped++;
    else for (const ip of nodeIPs) add(t, ip);
  }
  if (nodePortsSkipped) {
    notes.push(`${nodePortsSkipped} NodePort(s) not probed: ` +
      'give the node\'s addresses with --node-ip');
  }
  return { probes, notes };
}

/** Sides are loaded tables (targets read quickly) or parsed ones (targets from the facts). */
export function behaviourDiff(a: LoadedTable | ParsedSide, b: LoadedTable | ParsedSide,
  opts: BehaviourOptions): BehaviourResult {
  const targetsOf = (s: LoadedTable | ParsedSide) => 'facts' in s ? s.facts.targets
    : quickTargets(s.format, s.text) ?? parseSide(s).facts.targets;
  const { probes, notes } = buildProbes([...targetsOf(a), ...targetsOf(b)], opts);
  a = 'table' in a ? a.table : a;
  b = 'table' in b ? b.table : b;
  const ta = topology(buildFilter(a.format, a.text, a.origins), opts);
  const tb = topology(buildFilter(b.format, b.text, b.origins), opts);
  const differences: FlowDifference[] = [];
  for (const p of probes) {
    const before = outcome(ta, p, opts);
    const after = outcome(tb, p, opts);
    if (before !== after) differences.push({ probe: p, before, after });
  }
  return { probes: probes.length, differences, notes };
}

function topology(filter: NodeFilter, opts: BehaviourOptions): Topology {
  return {
    nodes: [{
      name: 'node', nodeIPs: opts.nodeIPs, podCIDRs: opts.podCIDRs, bridge: 'cni0',
      gatewayIPs: [], underlayIface: 'eth0', filter,
    }],
    pods: [],
  };
}

function outcome(topo: Topology, p: Probe, opts: BehaviourOptions): string {
  const pkt: Packet = {
    src: p.source, dst: p.dst, proto: p.proto, sport: DEFAULT_SPORT, dport: p.dport,
  };
  const entry = opts.nodeIPs.includes(p.source)
    ? { kind: 'node' as const, node: 'node' } : { kind: 'external' as const, node: 'node' };
  try {
    return describe(foldArrivals(pkt, walk(topo, entry, pkt, false)), p);
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

/** A canonical one-line outcome: verdict, then each destination with share and masquerade. */
export function describe(r: TraceResult, p: Probe): string {
  const untouched = `${p.dst.includes(':') ? `[${p.dst}]` : p.dst}:${p.dport}`;
  const parts = r.destinations.map((d) => {
    const share = (Math.round(d.probability * 1e6) / 1e6).toFixed(6);
    const moved = d.destination === untouched ? 'untouched' : `→ ${d.destination}`;
    const where = d.verdict === 'ACCEPT' ? moved : d.verdict;
    return `${where} p=${share}${d.masquerade && d.verdict === 'ACCEPT' ? ' masquerade' : ''}`;
  }).sort();
  return parts.join(', ');
}
