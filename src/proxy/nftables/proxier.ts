// kube-proxy's nftables backend (upstream pkg/proxy/nftables/proxier.go, ~v1.33): compiles the
// service-port and endpoints maps into the `nft -f` transaction upstream writes. A full sync
// rewrites the fixed setup and every service; a partial sync rewrites only the services whose
// Service or EndpointSlices changed and diffs the shared set/map elements. Chains that fell out
// of use are flushed at once and deleted (in a separate, earlier transaction) once they have
// been stale for more than a second, as upstream does for kernels before 6.2.

import { cidrContains, parseIP } from '../../api/net.js';
import { applyTransaction, dumpOps } from '../../ruleset/nftables/fake.js';
import { sortTransactionText } from '../../ruleset/nftables/canonical.js';
import { emptyRuleset } from '../../ruleset/nftables/model.js';
import { formatTransaction, parseTransaction } from '../../ruleset/nftables/transaction.js';
import type { Artifact, Proxier, ProxierConfig, SyncInput, SyncResult } from '../backend.js';
import { serviceNameOfKey } from '../keys.js';
import { topologyContextOf } from '../topology.js';
import { servicePortNameString, type EndpointInfo, type ServicePortInfo } from '../types.js';
import { ElementStorage } from './element-storage.js';
import * as N from './naming.js';
import { LazyOrigins, portKeyOfName } from './origins.js';
import { MemoNames, writeServicePort, type Containers, type NameSource, type PortObjects,
  type RuleContext } from './service-rules.js';
import { writeSetup } from './setup.js';
import { TxWriter } from './tx-writer.js';
import { TextSink } from '../text-sink.js';
import { textArtifact } from '../artifact.js';

/** Optional dependencies of the nftables proxier. */
export interface NftablesProxierDeps {
  /** Clock in milliseconds, for stale-chain ageing; default `Date.now`. */
  readonly now?: () => number;
  /** Mark string; default Go's `%#08x` of the mark bit (`0x00004000`), as production. */
  readonly masqueradeMark?: string;
}

/** A chain may be deleted once it has been stale (flushed, unreferenced) this long. */
export const STALE_CHAIN_DELETE_AFTER_MS = 1000;

const CONTAINER_ORDER: ReadonlyArray<keyof Containers> = ['clusterIPs', 'serviceIPs',
  'firewallIPs', 'noEndpointServices', 'noEndpointNodePorts', 'serviceNodePorts'];

function newContainers(): Containers {
  return {
    clusterIPs: new ElementStorage('set', N.CLUSTER_IPS_SET),
    serviceIPs: new ElementStorage('map', N.SERVICE_IPS_MAP),
    firewallIPs: new ElementStorage('map', N.FIREWALL_IPS_MAP),
    noEndpointServices: new ElementStorage('map', N.NO_ENDPOINT_SERVICES_MAP),
    noEndpointNodePorts: new ElementStorage('map', N.NO_ENDPOINT_NODEPORTS_MAP),
    serviceNodePorts: new ElementStorage('map', N.SERVICE_NODEPORTS_MAP),
  };
}

function ruleContext(config: ProxierConfig, names: NameSource): RuleContext {
  const words = N.familyWords(config.family);
  const d = config.detectLocal;
  let ifLocal: string | undefined;
  let ifNotLocal: string | undefined;
  if ((d.mode === 'ClusterCIDR' || d.mode === 'NodeCIDR') && d.cidrs[0]) {
    ifLocal = `${words.ipX} saddr ${d.cidrs[0]}`;
    ifNotLocal = `${words.ipX} saddr != ${d.cidrs[0]}`;
  } else if (d.mode === 'BridgeInterface' && d.interfaceName) {
    ifLocal = `iifname ${d.interfaceName}`;
    ifNotLocal = `iifname != ${d.interfaceName}`;
  } else if (d.mode === 'InterfaceNamePrefix' && d.interfaceName) {
    ifLocal = `iifname ${d.interfaceName}*`;
    ifNotLocal = `iifname != ${d.interfaceName}*`;
  }
  return {
    words,
    topology: topologyContextOf(config),
    masqueradeAll: config.masqueradeAll,
    ...(ifLocal !== undefined ? { ifLocal, ifNotLocal } : {}),
    ...(config.nodeIPs[0] !== undefined ? { nodeIP: config.nodeIPs[0] } : {}),
    containsIP: (cidr, ip) => cidrContains(cidr, ip),
    names,
  };
}

function isLoopback(ip: string): boolean {
  const p = parseIP(ip);
  if (!p) return false;
  return p.family === 'IPv4' ? (p.value >> 24n) === 127n : p.value === 1n;
}

/** Node IPs that accept node ports (upstream GetNodeIPs minus loopback). */
export function nodePortIPs(config: ProxierConfig): string[] {
  return config.nodeIPs.filter((ip) => !isLoopback(ip) &&
    config.nodePortAddresses.some((c) => cidrContains(c, ip)));
}

/** One service port as last written. */
interface PortState {
  readonly svc: ServicePortInfo;
  readonly objects: PortObjects;
}

/** What a sync changed, so `commit(false)` can restore the committed picture. */
interface Pending {
  /** Full sync: the new port map (replaces the committed one on success). */
  readonly fullPorts?: Map<string, PortState>;
  /** Partial sync: previous values of the port keys it rewrote (undefined = was absent). */
  readonly undo: Map<string, PortState | undefined>;
  /** Stale chains deleted by the ageing transaction. */
  readonly deleted: string[];
  /** Chains first marked stale by this sync. */
  readonly newlyStale: string[];
}

export class NftablesProxier implements Proxier {
  readonly mode = 'nftables' as const;
  private readonly tx: (sink?: TextSink, expectedBytes?: number) => TxWriter;
  /**
   * The main transaction's text is written here; its memory is reused by every sync. Partial
   * transactions are small: a full one larger than 16 MB is gathered in pieces instead.
   */
  private readonly sink = new TextSink(16 << 20);
  private readonly ctx: RuleContext;
  private readonly mark: string;
  private readonly now: () => number;
  private readonly containers = newContainers();
  private needFullSync = true;
  private baseChainsRecreated = false;
  /**
   * Service ports as the kernel holds them after the last successful apply (partial syncs
   * edit it in place and keep an undo record until `commit`). With `staleChains` it is the
   * proxier's whole knowledge of the per-service chains and affinity sets in the kernel.
   */
  private ports = new Map<string, PortState>();
  /** Service `ns/name` → its service-port key(s) (a Set only for several), for partial syncs. */
  private readonly portsOfService = new Map<string, string | Set<string>>();
  /** Flushed, no longer used chains that still exist → when they went stale. */
  private readonly staleChains = new Map<string, number>();
  /** Names upstream truncated (over 240 characters) → their service-port key. */
  private readonly truncated = new Map<string, string>();
  private pending: Pending | undefined;

  constructor(readonly config: ProxierConfig, deps: NftablesProxierDeps = {}) {
    const w = N.familyWords(config.family);
    this.tx = (sink, bytes) => new TxWriter(w.nftFamily, N.KUBE_PROXY_TABLE, sink, bytes);
    this.ctx = ruleContext(config, new MemoNames());
    this.mark = deps.masqueradeMark ?? N.masqueradeMark(config.masqueradeBit);
    this.now = deps.now ?? Date.now;
  }

  sync(input: SyncInput): SyncResult {
    const start = this.now();
    const pending: Pending = { undo: new Map(), deleted: [], newlyStale: [] };
    const artifacts: Artifact[] = [];
    const del = this.deleteAgedStaleChains(start, pending);
    if (del.length > 0) artifacts.push({ kind: 'nft', text: del.text() });

    const full = this.needFullSync || input.changed === undefined;
    const tx = this.tx(this.sink, full ? expectedBytes(input) : 0);
    let view: Map<string, PortState>;
    if (full) {
      const fullPorts = this.fullSync(tx, input, start, pending);
      this.pending = { ...pending, fullPorts };
      view = fullPorts;
    } else {
      this.partialSync(tx, input, input.changed!, start, pending);
      this.pending = pending;
      view = this.ports;
    }
    if (tx.length > 0) artifacts.push(textArtifact('nft', tx.finish()));
    return { full, artifacts, origins: new LazyOrigins(view, this.config.family, this.truncated) };
  }

  commit(applied: boolean): void {
    const p = this.pending;
    this.pending = undefined;
    if (!p) return;
    if (applied) {
      this.needFullSync = false;
      if (p.fullPorts) {
        this.ports = p.fullPorts;
        this.reindex();
      }
      return;
    }
    // As upstream after a failed transaction: full resync next, stale timers forgotten (the
    // chains are found again by the next full sync, which flushes and re-times them).
    this.needFullSync = true;
    for (const [key, old] of p.undo) {
      if (old) this.ports.set(key, old);
      else this.ports.delete(key);
    }
    if (p.undo.size > 0) this.reindex();
    for (const c of p.newlyStale) this.staleChains.delete(c);
    for (const c of p.deleted) this.staleChains.set(c, Infinity);
    for (const c of this.staleChains.keys()) this.staleChains.set(c, Infinity);
  }

  private reindex(): void {
    this.portsOfService.clear();
    for (const key of this.ports.keys()) this.indexPort(key, true);
  }

  private deleteAgedStaleChains(start: number, pending: Pending): TxWriter {
    const tx = this.tx();
    const aged = [...this.staleChains].filter(([, t]) => t < start - STALE_CHAIN_DELETE_AFTER_MS)
      .map(([c]) => c).sort();
    for (const c of aged) {
      tx.delete('chain', c);
      this.staleChains.delete(c);
      pending.deleted.push(c);
    }
    return tx;
  }

  private setup(tx: TxWriter): void {
    writeSetup(tx, {
      words: this.ctx.words,
      mark: this.mark,
      serviceCIDRs: this.config.serviceCIDRs,
      nodePortMatchAll: this.config.nodePortAddresses.length === 0,
      nodePortIPs: nodePortIPs(this.config),
      recreateBaseChains: !this.baseChainsRecreated,
    });
    this.baseChainsRecreated = true;
    for (const k of CONTAINER_ORDER) this.containers[k].reset(tx);
  }

  private writePort(tx: TxWriter, key: string, svc: ServicePortInfo,
    eps: readonly EndpointInfo[]): PortState {
    const objects = writeServicePort(tx, this.containers, this.ctx, key, svc, eps);
    for (const c of objects.chains) if (c.endsWith('...')) this.truncated.set(c, key);
    for (const c of objects.affinitySets) if (c.endsWith('...')) this.truncated.set(c, key);
    return { svc, objects };
  }

  /** Is `chain` (a per-service chain name) used by the port map `ports`? */
  private isActive(ports: ReadonlyMap<string, PortState>, chain: string): boolean {
    const key = this.truncated.get(chain) ?? portKeyOfName(chain);
    return key !== undefined && (ports.get(key)?.objects.chains.includes(chain) ?? false);
  }

  private markStale(tx: TxWriter, chain: string, start: number, pending: Pending): void {
    tx.flush('chain', chain);
    if (!this.staleChains.has(chain)) pending.newlyStale.push(chain);
    this.staleChains.set(chain, start);
  }

  private fullSync(tx: TxWriter, input: SyncInput, start: number,
    pending: Pending): Map<string, PortState> {
    this.setup(tx);
    const next = new Map<string, PortState>();
    for (const key of [...input.services.keys()].sort()) {
      const svc = input.services.get(key)!;
      next.set(key, this.writePort(tx, key, svc, input.endpoints.get(key) ?? []));
    }
    // Chains the kernel holds: those of the committed ports, and the stale ones.
    const existing = new Set<string>(this.staleChains.keys());
    for (const c of pending.deleted) existing.delete(c);
    const staleSets: string[] = [];
    for (const [key, old] of this.ports) {
      const now = next.get(key)?.objects;
      for (const c of old.objects.chains) {
        if (!now || !now.chains.includes(c)) existing.add(c);
      }
      for (const s of old.objects.affinitySets) {
        if (!now || !now.affinitySets.includes(s)) staleSets.push(s);
      }
    }
    for (const c of [...existing].sort()) {
      if (this.isActive(next, c)) this.staleChains.delete(c);
      else this.markStale(tx, c, start, pending);
    }
    for (const s of staleSets.sort()) tx.delete('set', s);
    for (const k of CONTAINER_ORDER) this.containers[k].cleanup(tx, []);
    return next;
  }

  private indexPort(key: string, present: boolean): void {
    const svc = serviceNameOfKey(key);
    const cur = this.portsOfService.get(svc);
    if (present) {
      if (cur === undefined || cur === key) this.portsOfService.set(svc, key);
      else if (typeof cur === 'string') this.portsOfService.set(svc, new Set([cur, key]));
      else cur.add(key);
    } else if (cur === key) {
      this.portsOfService.delete(svc);
    } else if (cur !== undefined && typeof cur !== 'string') {
      cur.delete(key);
      if (cur.size === 1) this.portsOfService.set(svc, [...cur][0]!);
    }
  }

  /** Service-port keys to rewrite: every port, old or new, of every service that changed. */
  private affectedKeys(input: SyncInput, changed: ReadonlySet<string>): string[] {
    const keys = new Set<string>(changed);
    for (const k of changed) {
      const ports = this.portsOfService.get(serviceNameOfKey(k));
      if (typeof ports === 'string') keys.add(ports);
      else for (const other of ports ?? []) keys.add(other);
    }
    for (const k of keys) this.indexPort(k, input.services.has(k));
    return [...keys].sort();
  }

  private partialSync(tx: TxWriter, input: SyncInput, changed: ReadonlySet<string>,
    start: number, pending: Pending): void {
    const affected = this.affectedKeys(input, changed);
    const candidates = new Map<keyof Containers, string[]>();
    for (const k of CONTAINER_ORDER) this.containers[k].track();
    for (const key of affected) {
      const old = this.ports.get(key);
      pending.undo.set(key, old);
      if (!old) continue;
      const o = old.objects;
      o.elementKeys.forEach((el, i) => {
        const k = o.elementContainers[i]!;
        this.containers[k].disown(key, el);
        let list = candidates.get(k);
        if (!list) candidates.set(k, (list = []));
        list.push(el);
      });
    }
    for (const key of affected) {
      const svc = input.services.get(key);
      if (svc) this.ports.set(key, this.writePort(tx, key, svc, input.endpoints.get(key) ?? []));
      else this.ports.delete(key);
    }
    const stale = new Set<string>(this.staleChains.keys());
    const staleSets: string[] = [];
    for (const key of affected) {
      const old = pending.undo.get(key)?.objects;
      if (!old) continue;
      const now = this.ports.get(key)?.objects;
      for (const c of old.chains) if (!now || !now.chains.includes(c)) stale.add(c);
      for (const s of old.affinitySets) {
        if (!now || !now.affinitySets.includes(s)) staleSets.push(s);
      }
    }
    for (const c of pending.deleted) stale.delete(c);
    for (const c of [...stale].sort()) {
      if (this.isActive(this.ports, c)) this.staleChains.delete(c);
      else this.markStale(tx, c, start, pending);
    }
    for (const s of staleSets.sort()) tx.delete('set', s);
    for (const k of CONTAINER_ORDER) this.containers[k].cleanup(tx, candidates.get(k) ?? []);
  }
}

/** A generous estimate of a full transaction's size (~600 bytes an endpoint are written). */
function expectedBytes(input: SyncInput): number {
  let n = 1 << 16;
  for (const k of input.services.keys()) n += 1024 + 1024 * (input.endpoints.get(k)?.length ?? 0);
  return n;
}

export function buildProxier(config: ProxierConfig, deps?: NftablesProxierDeps): NftablesProxier {
  return new NftablesProxier(config, deps);
}

/**
 * Canonical form of a full-sync transaction: the state it produces from an empty table, as
 * `add` lines in upstream's test order (what golden files hold).
 */
export function canonicalize(artifact: Artifact): string {
  const state = applyTransaction(emptyRuleset(), parseTransaction(artifact.text));
  return sortTransactionText(formatTransaction(dumpOps(state)));
}
