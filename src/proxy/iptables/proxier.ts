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
import { servicePortRules } from './service-rules.js';
import type { PortRules, RuleContext } from './service-rules.js';

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
  readonly declaredNat: readonly string[];
  readonly deleted: readonly string[];
  readonly rules: ReadonlyMap<string, PortRules>;
  readonly order: readonly string[];
  readonly chunks: readonly Chunk[];
  readonly skippedStale: ReadonlyMap<string, string>;
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

const lines = (text: string, out: string[]) => { if (text !== '') out.push(text); };

/**
 * `parts.join('\n')` built with `+`: V8 keeps the result as a rope of the (large, already
 * joined) parts and copies the bytes once, when the text is consumed, instead of here and again
 * there. Same string value.
 */
function concatLines(parts: readonly string[]): string {
  let out = parts.length > 0 ? parts[0]! : '';
  for (let i = 1; i < parts.length; i++) out = out + '\n' + parts[i]!;
  return out;
}

/**
 * Service ports per chunk. A partial sync still writes every capture rule; it reuses the joined
 * capture text of chunks without a changed service, so its cost follows the change, not the
 * number of services.
 */
const CHUNK = 128;

/** The always-written texts (filter rules, nat capture rules) of a run of service ports. */
interface Chunk {
  readonly filter: string;
  readonly nat: string;
}

interface Sink {
  readonly natChains: string[];
  readonly natRules: string[];
  readonly declaredNat: string[];
}

class IptablesProxier implements Proxier {
  readonly mode = 'iptables' as const;
  private needFullSync = true;
  private existingNat: Set<string>;
  private lastCleanup = -Infinity;
  /** Rules of every service port as last applied. */
  private cache = new Map<string, PortRules>();
  /** Service-port keys of `cache`, in emission order. */
  private order: readonly string[] = [];
  /** Capture-rule texts of `order` in chunks, reused by partial syncs. */
  private chunks: readonly Chunk[] = [];
  private chunkOf = new Map<string, number>();
  /** Stale chains not yet deleted (large-cluster scans skipped), chain → owner key. */
  private skippedStale = new Map<string, string>();
  private pending: Pending | undefined;
  private readonly probabilities = new Probabilities();
  /** Chain names per service-port / endpoint info object, reused across syncs. */
  private readonly names = new NameCache();
  private readonly mark: string;
  private readonly now: () => number;

  constructor(readonly config: ProxierConfig, deps: IptablesDeps = {}) {
    this.mark = masqueradeMark(config.masqueradeBit);
    this.now = deps.now ?? Date.now;
    this.existingNat = new Set(deps.existingNatChains ?? []);
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
    if (full || input.services.size !== this.order.length) return sortedKeys(input.services);
    for (const k of input.changed ?? []) {
      if (input.services.has(k) !== this.cache.has(k)) return sortedKeys(input.services);
    }
    return this.order;
  }

  sync(input: SyncInput): SyncResult {
    const full = this.needFullSync || input.changed === undefined;
    const changedServices = new Set<string>();
    for (const k of input.changed ?? []) changedServices.add(serviceNameOfKey(k));
    const c = this.config;
    const isIPv4 = c.family === 'IPv4';
    const ctx = this.ruleContext(input);
    const M = this.mark;
    const filterChains = ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-FORWARD',
      'KUBE-NODEPORTS', 'KUBE-PROXY-FIREWALL'].map((n) => `:${n} - [0:0]`);
    const natChains = ['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-MARK-MASQ']
      .map((n) => `:${n} - [0:0]`);
    const filterRules: string[] = [];
    const natRules: string[] = [
      `-A KUBE-POSTROUTING -m mark ! --mark ${M}/${M} -j RETURN`,
      `-A KUBE-POSTROUTING -j MARK --xor-mark ${M}`,
      '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" ' +
        `-j MASQUERADE${c.capabilities.randomFully ? ' --random-fully' : ''}`,
      `-A KUBE-MARK-MASQ -j MARK --or-mark ${M}`,
    ];
    if (isIPv4 && c.localhostNodePorts) {
      filterChains.push(':KUBE-FIREWALL - [0:0]');
      filterRules.push('-A KUBE-FIREWALL -m comment --comment "block incoming localnet ' +
        'connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate ' +
        'RELATED,ESTABLISHED,DNAT -j DROP');
    }
    const order = this.orderFor(input, full);
    const reuse = !full && order === this.order;
    const dirty = new Set<number>();
    if (reuse) {
      for (const k of input.changed ?? []) {
        const ci = this.chunkOf.get(k);
        if (ci !== undefined) dirty.add(ci);
      }
    }
    const declaredNat: string[] = [];
    const rulesByKey = reuse ? new Map(this.cache) : new Map<string, PortRules>();
    const chunks: Chunk[] = [];
    for (let ci = 0; ci * CHUNK < order.length; ci++) {
      const old = reuse && !dirty.has(ci) ? this.chunks[ci] : undefined;
      const chunk = old ?? this.buildChunk(order.slice(ci * CHUNK, (ci + 1) * CHUNK), input, ctx,
        full, changedServices, rulesByKey, { natChains, natRules, declaredNat });
      chunks.push(chunk);
      lines(chunk.filter, filterRules);
      if (old) lines(old.nat, natRules);
    }
    /** Chains the written services had before and no longer have: stale candidates. */
    const candidates = new Map<string, string>(this.skippedStale);
    for (const k of input.changed ?? []) {
      for (const name of this.cache.get(k)?.chains ?? []) candidates.set(name, k);
    }
    const now = this.now();
    const scan = !ctx.largeClusterMode || now - this.lastCleanup > c.syncPeriodMs;
    const stale = scan ? this.staleChains(full, rulesByKey, candidates) : [];
    for (const name of stale) {
      natChains.push(`:${name} - [0:0]`);
      natRules.push(`-X ${name}`);
    }
    natRules.push(...this.tailRules());
    if (c.capabilities.nfacct) {
      filterRules.push('-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct ' +
        '--nfacct-name ct_state_invalid_dropped_pkts -j DROP');
    } else {
      filterRules.push('-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP');
    }
    filterRules.push(`-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" ` +
      `-m mark --mark ${M}/${M} -j ACCEPT`);
    filterRules.push('-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack ' +
      'rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT');
    const text = `*filter\n${filterChains.join('\n')}\n${concatLines(filterRules)}\nCOMMIT\n` +
      `*nat\n${natChains.join('\n')}\n${concatLines(natRules)}\nCOMMIT\n`;
    this.pending = {
      declaredNat, deleted: stale, rules: rulesByKey, order, chunks, scanned: scan, now,
      skippedStale: scan ? new Map() : candidates,
    };
    const kind = isIPv4 ? 'iptables-restore' : 'ip6tables-restore';
    return { full, artifacts: [{ kind, text }], origins: new LazyOrigins(rulesByKey) };
  }

  /**
   * Rules of a run of service ports: appends this sync's nat output (captures, plus chains of
   * the services written) to `sink` and returns the capture-only texts for reuse.
   */
  private buildChunk(keys: readonly string[], input: SyncInput, ctx: RuleContext, full: boolean,
    changed: ReadonlySet<string>, rulesByKey: Map<string, PortRules>, sink: Sink): Chunk {
    const filter: string[] = [];
    const capture: string[] = [];
    for (const key of keys) {
      const svc = input.services.get(key)!;
      const write = full || changed.has(`${svc.name.namespace}/${svc.name.name}`);
      let r = write ? undefined : this.cache.get(key);
      if (!r) r = servicePortRules(svc, input.endpoints.get(key) ?? [], ctx);
      rulesByKey.set(key, r);
      lines(r.filterRules, filter);
      lines(r.natCapture, capture);
      lines(r.natCapture, sink.natRules);
      if (write) {
        lines(r.natChainLines, sink.natChains);
        lines(r.natChainRules, sink.natRules);
        for (const name of r.chains) sink.declaredNat.push(name);
        // Only the capture rules are needed again (by partial syncs): drop the chain texts.
        if (r.natChainRules !== '') {
          rulesByKey.set(key, { ...r, natChainLines: '', natChainRules: '' });
        }
      }
    }
    return { filter: filter.join('\n'), nat: capture.join('\n') };
  }

  /**
   * Chains to flush and delete. Full sync: every kube-proxy chain the kernel has that this
   * sync does not use (upstream scans `iptables-save -t nat`). Partial sync: the kernel model
   * only changes through our own restores, so the candidates are the chains the rewritten
   * services used to have (plus those left by skipped scans) and no longer have.
   */
  private staleChains(full: boolean, rules: ReadonlyMap<string, PortRules>,
    candidates: ReadonlyMap<string, string>): string[] {
    const out: string[] = [];
    if (full) {
      if (this.existingNat.size === 0) return out;
      const active = new Set<string>();
      for (const r of rules.values()) for (const n of r.chains) active.add(n);
      for (const n of this.existingNat) {
        if (!active.has(n) && isServiceChainName(n)) out.push(n);
      }
    } else {
      for (const [n, owner] of candidates) {
        if (!this.existingNat.has(n)) continue;
        if (rules.get(owner)?.chains.includes(n)) continue;
        out.push(n);
      }
    }
    return out.sort();
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
    for (const n of p.deleted) this.existingNat.delete(n);
    for (const n of p.declaredNat) this.existingNat.add(n);
    this.cache = p.rules as Map<string, PortRules>;
    if (this.order !== p.order) {
      this.chunkOf = new Map(p.order.map((k, i) => [k, Math.floor(i / CHUNK)]));
    }
    this.order = p.order;
    this.chunks = p.chunks;
    this.skippedStale = new Map(p.skippedStale);
  }
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
