// The iptables backend: one sync = one `iptables-restore --noflush` input (filter + nat), as
// upstream's pkg/proxy/iptables syncProxyRules. After a first full sync, syncs are partial
// (KEP-3453): the filter table and the nat base chains are always rewritten with every service's
// capture rules, but the per-service chains only for services that changed; stale chains are
// flushed and deleted (`-X`). A failed apply makes the next sync full.
//
// kdp choices where upstream leaves order open: service ports are emitted sorted by
// (namespace/name, port name, protocol); stale chains sorted by name.

import { cidrContains } from '../../api/net.js';
import type { Artifact, Proxier, ProxierConfig, SyncInput, SyncResult }
  from '../backend.js';
import { serviceNameOfKey } from '../keys.js';
import { topologyContextOf } from '../topology.js';
import type { ServicePortInfo } from '../types.js';
import { canonicalizeRestore } from '../../ruleset/iptables/canonical.js';
import { isServiceChainName } from './chain-names.js';
import { buildLocalDetector } from './local-detector.js';
import { NameCache } from './name-cache.js';
import { LazyOrigins } from './origins.js';
import { Probabilities } from './probability.js';
import { planServicePort, writeChainDecls, writeChainRules } from './service-rules.js';
import type { PortPlan, PortRules, RuleContext } from './service-rules.js';
import { TextSink } from '../text-sink.js';
import { textArtifact } from '../artifact.js';
import { CHUNK, PortTable, type Chunk } from './port-table.js';

export const LARGE_CLUSTER_ENDPOINTS_THRESHOLD = 1000;

/** Go's `fmt.Sprintf("%#08x", 1 << bit)`: `0x` + 8 zero-padded hex digits (`0x00004000`). */
export function masqueradeMark(bit: number): string {
  return `0x${(2 ** bit).toString(16).padStart(8, '0')}`;
}

export interface IptablesDeps {
  /** Milliseconds clock (large-cluster stale-chain scan interval). Default Date.now. */
  readonly now?: () => number;
  /** nat chains already in the kernel (what `iptables-save -t nat` lists) at start. */
  readonly existingNatChains?: Iterable<string>;
}

interface Pending {
  readonly full: boolean;
  /** Every service port's rules after this sync (the applied state once committed). */
  readonly table: PortTable;
  /** Stale chains this sync deletes (`-X`). */
  readonly deleted: readonly string[];
  /** Stale chains left in place (scan skipped in large-cluster mode), chain → owner key. */
  readonly kept: ReadonlyMap<string, string>;
  readonly scanned: boolean;
  readonly now: number;
}

/** Sort key of a service port: (namespace/name, port name, protocol). */
function orderKey(s: ServicePortInfo): string {
  return `${s.name.namespace}/${s.name.name}\u0000${s.name.port}\u0000${s.protocol}`;
}

function sortedKeys(services: ReadonlyMap<string, ServicePortInfo>): string[] {
  const keyed = [...services].map(([k, s]) => [orderKey(s), k] as const);
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return keyed.map(([, k]) => k);
}

/**
 * Upstream's largeClusterMode: more than LARGE_CLUSTER_ENDPOINTS_THRESHOLD endpoints over all
 * service ports. Stops counting once past it (a partial sync must not walk every service).
 */
function isLargeCluster(input: SyncInput): boolean {
  let total = 0;
  for (const k of input.services.keys()) {
    total += input.endpoints.get(k)?.length ?? 0;
    if (total > LARGE_CLUSTER_ENDPOINTS_THRESHOLD) return true;
  }
  return false;
}

/** One chunk of this sync's output: reused as it is, or rebuilt port by port. */
interface Segment {
  readonly chunk: Chunk;
  /** Set when the chunk is rebuilt: its ports, with a plan where the port is written. */
  readonly ports?: ReadonlyArray<{ readonly rules: PortRules; readonly plan?: PortPlan }>;
}

class IptablesProxier implements Proxier {
  readonly mode = 'iptables' as const;
  private needFullSync = true;
  /**
   * nat chains found in the kernel at start and not yet accounted for (the first full sync
   * deletes the stale ones and adopts the rest). The chains of `table` are in the kernel too.
   */
  private readonly leftoverNat: Set<string>;
  private lastCleanup = -Infinity;
  /** Rules of every service port as last applied. */
  private table = new PortTable([], []);
  /** Stale chains not yet deleted (large-cluster scans skipped), chain → owner key. */
  private skippedStale: ReadonlyMap<string, string> = new Map();
  /** The restore text is written here; its memory is reused by every sync. */
  private readonly sink = new TextSink();
  private pending: Pending | undefined;
  private readonly probabilities = new Probabilities();
  /** Chain names per service-port / endpoint info object, reused across syncs. */
  private readonly names = new NameCache();
  private readonly mark: string;
  private readonly now: () => number;

  constructor(readonly config: ProxierConfig, deps: IptablesDeps = {}) {
    this.mark = masqueradeMark(config.masqueradeBit);
    this.now = deps.now ?? Date.now;
    this.leftoverNat = new Set(deps.existingNatChains ?? []);
  }

  private ruleContext(input: SyncInput): RuleContext {
    const c = this.config;
    const detector = buildLocalDetector(c.detectLocal);
    return {
      masqueradeAll: c.masqueradeAll,
      detector,
      ifLocal: detector.ifLocal.join(' '),
      ifNotLocal: detector.ifNotLocal.join(' '),
      names: this.names,
      nodeIP: c.nodeIPs[0],
      localhostNodePorts: c.localhostNodePorts,
      isIPv4: c.family === 'IPv4',
      nfacct: c.capabilities.nfacct,
      largeClusterMode: isLargeCluster(input),
      topology: topologyContextOf(c),
      probabilities: this.probabilities,
    };
  }

  /** Emission order: reuse the last one unless service ports came or went. */
  private orderFor(input: SyncInput, full: boolean): readonly string[] {
    const last = this.table;
    if (full || input.services.size !== last.order.length) return sortedKeys(input.services);
    for (const k of input.changed ?? []) {
      if (input.services.has(k) !== last.has(k)) return sortedKeys(input.services);
    }
    return last.order;
  }

  sync(input: SyncInput): SyncResult {
    const full = this.needFullSync || input.changed === undefined;
    const changedServices = new Set<string>();
    for (const k of input.changed ?? []) changedServices.add(serviceNameOfKey(k));
    const ctx = this.ruleContext(input);
    const last = this.table;
    const order = this.orderFor(input, full);
    const reuse = !full && order === last.order;
    const dirty = new Set<number>();
    if (reuse) {
      for (const k of input.changed ?? []) {
        const i = last.positions.get(k);
        if (i !== undefined) dirty.add(Math.floor(i / CHUNK));
      }
    }
    const segments: Segment[] = [];
    for (let ci = 0; ci * CHUNK < order.length; ci++) {
      const old = reuse && !dirty.has(ci) ? last.chunks[ci] : undefined;
      segments.push(old ? { chunk: old } : this.planChunk(order.slice(ci * CHUNK,
        (ci + 1) * CHUNK), input, ctx, full, changedServices));
    }
    const table = new PortTable(order, segments.map((g) => g.chunk),
      reuse ? last.positions : undefined);
    const now = this.now();
    const scan = !ctx.largeClusterMode || now - this.lastCleanup > this.config.syncPeriodMs;
    const gone = this.goneChains(full, scan, input.changed, table);
    const deleted = scan ? [...gone.keys()].sort() : [];
    const text = this.write(segments, deleted, ctx);
    this.pending = { full, table, deleted, kept: scan ? new Map() : gone, scanned: scan, now };
    const kind = this.config.family === 'IPv4' ? 'iptables-restore' : 'ip6tables-restore';
    return { full, artifacts: [textArtifact(kind, text)], origins: new LazyOrigins(table) };
  }

  /**
   * Plans a run of service ports: the rules of every port (the last ones when the port is not
   * written), the plans of the written ones, and the run's joined capture texts.
   */
  private planChunk(keys: readonly string[], input: SyncInput, ctx: RuleContext, full: boolean,
    changed: ReadonlySet<string>): Segment {
    const filter: string[] = [];
    const capture: string[] = [];
    const rulesOf: PortRules[] = [];
    const ports: Array<{ rules: PortRules; plan?: PortPlan }> = [];
    for (const key of keys) {
      const svc = input.services.get(key)!;
      const write = full || changed.has(`${svc.name.namespace}/${svc.name.name}`);
      let rules = write ? undefined : this.table.get(key);
      let plan: PortPlan | undefined;
      if (!rules) {
        plan = planServicePort(svc, input.endpoints.get(key) ?? [], ctx);
        rules = plan.rules;
      }
      rulesOf.push(rules);
      if (rules.filterRules !== '') filter.push(rules.filterRules);
      if (rules.natCapture !== '') capture.push(rules.natCapture);
      ports.push(write ? { rules, plan } : { rules });
    }
    const chunk = { keys, rules: rulesOf, filter: filter.join('\n'), nat: capture.join('\n') };
    return { chunk, ports };
  }

  /** The restore input: filter table, then nat (declarations, rules, deletions, tail). */
  private write(segments: readonly Segment[], deleted: readonly string[], ctx: RuleContext):
    string | string[] {
    const c = this.config;
    const M = this.mark;
    const out = this.sink;
    out.reset(expectedBytes(segments));
    out.line('*filter');
    for (const n of FILTER_CHAINS) out.line(`:${n} - [0:0]`);
    if (c.family === 'IPv4' && c.localhostNodePorts) {
      out.line(':KUBE-FIREWALL - [0:0]');
      out.line('-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" ' +
        '-d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT ' +
        '-j DROP');
    }
    for (const g of segments) if (g.chunk.filter !== '') out.block(g.chunk.filter);
    out.line(c.capabilities.nfacct
      ? '-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct ' +
        '--nfacct-name ct_state_invalid_dropped_pkts -j DROP'
      : '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP');
    out.line('-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" ' +
      `-m mark --mark ${M}/${M} -j ACCEPT`);
    out.line('-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack ' +
      'rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT');
    out.line('COMMIT');
    out.line('*nat');
    for (const n of NAT_CHAINS) out.line(`:${n} - [0:0]`);
    for (const g of segments) {
      for (const p of g.ports ?? []) if (p.plan) writeChainDecls(p.rules, out);
    }
    for (const n of deleted) out.line(`:${n} - [0:0]`);
    out.line(`-A KUBE-POSTROUTING -m mark ! --mark ${M}/${M} -j RETURN`);
    out.line(`-A KUBE-POSTROUTING -j MARK --xor-mark ${M}`);
    out.line('-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring ' +
      `SNAT" -j MASQUERADE${c.capabilities.randomFully ? ' --random-fully' : ''}`);
    out.line(`-A KUBE-MARK-MASQ -j MARK --or-mark ${M}`);
    for (const g of segments) {
      if (g.ports === undefined) {
        if (g.chunk.nat !== '') out.block(g.chunk.nat);
        continue;
      }
      for (const p of g.ports) {
        if (p.rules.natCapture !== '') out.line(p.rules.natCapture);
        if (p.plan) writeChainRules(p.plan, ctx, out);
      }
    }
    for (const n of deleted) out.line(`-X ${n}`);
    for (const r of this.tailRules()) out.line(r);
    out.line('COMMIT');
    return out.finish();
  }

  /**
   * Chains in the kernel that this sync no longer uses, chain → owner service-port key ('' for
   * chains found at start). Full sync: every chain of the last table that its port no longer
   * has, plus (when scanning) the kube-proxy chains found at start that nothing uses. Partial
   * sync: the chains the rewritten ports had before. Plus those left by skipped scans.
   */
  private goneChains(full: boolean, scan: boolean, changed: ReadonlySet<string> | undefined,
    table: PortTable): Map<string, string> {
    const gone = new Map<string, string>();
    for (const [n, owner] of this.skippedStale) {
      if (!table.get(owner)?.chains.includes(n)) gone.set(n, owner);
    }
    const last = this.table;
    if (full) {
      for (const [k, old] of last.entries()) droppedChains(old, table.get(k), k, gone);
      if (scan && this.leftoverNat.size > 0) {
        const active = new Set<string>();
        for (const r of table.values()) for (const n of r.chains) active.add(n);
        for (const n of this.leftoverNat) {
          if (!active.has(n) && isServiceChainName(n)) gone.set(n, '');
        }
      }
    } else {
      for (const k of changed ?? []) {
        const old = last.get(k);
        if (old) droppedChains(old, table.get(k), k, gone);
      }
    }
    return gone;
  }

  /** The KUBE-SERVICES → KUBE-NODEPORTS tail rule(s). */
  private tailRules(): string[] {
    const c = this.config;
    const comment = '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; ' +
      'NOTE: this must be the last rule in this chain"';
    if (c.nodePortAddresses.length === 0) {
      let dst = '-m addrtype --dst-type LOCAL';
      if (c.family === 'IPv6') dst += ' ! -d ::1/128';
      else if (!c.localhostNodePorts) dst += ' ! -d 127.0.0.0/8';
      return [`${comment} ${dst} -j KUBE-NODEPORTS`];
    }
    return nodePortIPs(c).map((ip) => `${comment} -d ${ip} -j KUBE-NODEPORTS`);
  }

  commit(applied: boolean): void {
    const p = this.pending;
    this.pending = undefined;
    if (!p) return;
    if (p.scanned) this.lastCleanup = p.now;
    if (!applied) { this.needFullSync = true; return; }
    this.needFullSync = false;
    // A full scanning sync deleted the stale chains found at start and adopted the others.
    if (p.full && p.scanned) this.leftoverNat.clear();
    this.table = p.table;
    this.skippedStale = p.kept;
  }
}

const FILTER_CHAINS = ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-FORWARD', 'KUBE-NODEPORTS',
  'KUBE-PROXY-FIREWALL'];
const NAT_CHAINS = ['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-MARK-MASQ'];

/**
 * A generous estimate of a restore input's size: its per-service chains are the bulk (a
 * declaration and up to 3 lines of ~150 bytes per endpoint), the rest is kept text.
 */
function expectedBytes(segments: readonly Segment[]): number {
  let n = 1 << 16;
  for (const g of segments) {
    n += g.chunk.filter.length + g.chunk.nat.length + 2 * CHUNK;
    for (const p of g.ports ?? []) if (p.plan) n += 512 + 512 * p.rules.chains.length;
  }
  return n;
}

/** Adds to `gone` the chains of `old` that `now` (the same port this sync) no longer has. */
function droppedChains(old: PortRules, now: PortRules | undefined, owner: string,
  gone: Map<string, string>): void {
  if (old === now) return;
  const was = old.chains;
  const is = now?.chains ?? [];
  if (was.length === is.length && was.every((n, i) => n === is[i])) return;
  const keep = new Set(is);
  for (const n of was) if (!keep.has(n)) gone.set(n, owner);
}

/**
 * The node addresses matching explicit nodePortAddresses, as upstream GetNodeIPs over the
 * host's interfaces. Offline, the interfaces are `lo` (127.0.0.1 / ::1) then the node IPs in
 * the given order. Loopback is skipped for IPv6 and when localhost node ports are off.
 */
export function nodePortIPs(c: ProxierConfig): string[] {
  const loop = c.family === 'IPv4' ? '127.0.0.1' : '::1';
  const out: string[] = [];
  for (const ip of [loop, ...c.nodeIPs]) {
    if (out.includes(ip)) continue;
    if (!c.nodePortAddresses.some((cidr) => cidrContainsSafe(cidr, ip))) continue;
    if (ip === loop && (c.family === 'IPv6' || !c.localhostNodePorts)) continue;
    out.push(ip);
  }
  return out;
}

function cidrContainsSafe(cidr: string, ip: string): boolean {
  try { return cidrContains(cidr, ip); } catch { return false; }
}

export function buildProxier(config: ProxierConfig, deps?: IptablesDeps): Proxier {
  if (config.mode !== 'iptables') throw new Error(`iptables backend given mode ${config.mode}`);
  return new IptablesProxier(config, deps);
}

/** Canonical form of a restore input (upstream's sortIPTablesRules). */
export function canonicalize(artifact: Artifact): string {
  return canonicalizeRestore(artifact.text);
}
