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
import type { Artifact, Proxier, ProxierConfig, RuleOrigin, SyncInput,
  SyncResult } from '../backend.js';
import { serviceNameOfKey } from '../keys.js';
import { topologyContextOf } from '../topology.js';
import { servicePortNameString, type EndpointInfo, type ServicePortInfo } from '../types.js';
import { ElementStorage } from './element-storage.js';
import * as N from './naming.js';
import { writeServicePort, type Containers, type NameSource, type PortObjects,
  type RuleContext } from './service-rules.js';
import { writeSetup } from './setup.js';
import { TxWriter } from './tx-writer.js';

/** Optional dependencies of the nftables proxier. */
export interface NftablesProxierDeps {
  /** Clock in milliseconds, for stale-chain ageing; default `Date.now`. */
  readonly now?: () => number;
  /** Mark string; default Go's `%#08x` of the mark bit (`0x00004000`), as production. */
  readonly masqueradeMark?: string;
}

/** A chain may be deleted once it has been stale (flushed, unreferenced) this long. */
export const STALE_CHAIN_DELETE_AFTER_MS = 1000;

interface PortState {
  readonly svc: ServicePortInfo;
  readonly objects: PortObjects;
}

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

/**
 * Memoised name bases. Hashing is most of a full sync's cost; a sync reads the previous
 * sync's names and keeps only those it used, so the memo never outgrows the table.
 */
class NameMemo implements NameSource {
  private previous = new Map<string, string>();
  private current = new Map<string, string>();

  private limit = 10_000;

  /**
   * Start a generation: names not used since then are forgotten. Partial syncs keep adding to
   * the current generation until it doubles, so endpoint churn cannot grow the memo forever.
   */
  rotate(partial: boolean): void {
    if (partial && this.current.size <= this.limit) return;
    this.previous = this.current;
    this.current = new Map();
  }

  /** After a full sync: the size the memo may grow to before partial syncs rotate it. */
  settle(): void {
    this.limit = 2 * this.current.size + 10_000;
  }

  private get(input: string): string {
    let v = this.current.get(input);
    if (v === undefined) {
      v = this.previous.get(input) ?? N.hashAndTruncate(input);
      this.current.set(input, v);
    }
    return v;
  }

  servicePort(svc: ServicePortInfo): string {
    const n = svc.name;
    return this.get(`${n.namespace}/${n.name}/${n.protocol.toLowerCase()}/${n.port}`);
  }

  endpoint(svc: ServicePortInfo, ep: EndpointInfo): string {
    const n = svc.name;
    const host = ep.ip.includes(':') ? ep.ip.replaceAll(':', '.') : ep.ip;
    return this.get(`${n.namespace}/${n.name}/${n.protocol.toLowerCase()}/${n.port}__${host}/${ep.port}`);
  }
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

/** Pending changes to the proxier's knowledge of the kernel, applied on `commit(true)`. */
interface Pending {
  readonly addedChains: Set<string>;
  readonly deletedChains: Set<string>;
  readonly addedSets: Set<string>;
  readonly deletedSets: Set<string>;
}

export class NftablesProxier implements Proxier {
  readonly mode = 'nftables' as const;
  private readonly tx: () => TxWriter;
  private readonly ctx: RuleContext;
  private readonly names = new NameMemo();
  /** Service `ns/name` → its service-port keys, for partial syncs. */
  private readonly portsOfService = new Map<string, Set<string>>();
  private readonly mark: string;
  private readonly now: () => number;
  private containers = newContainers();
  private needFullSync = true;
  private baseChainsRecreated = false;
  private ports = new Map<string, PortState>();
  /** Per-service chains and affinity sets the kernel holds (after the last commit). */
  private readonly kernelChains = new Set<string>();
  private readonly kernelSets = new Set<string>();
  private readonly staleChains = new Map<string, number>();
  private readonly origins = new Map<string, RuleOrigin>();
  private pending: Pending | undefined;

  constructor(readonly config: ProxierConfig, deps: NftablesProxierDeps = {}) {
    const w = N.familyWords(config.family);
    this.tx = () => new TxWriter(w.nftFamily, N.KUBE_PROXY_TABLE);
    this.ctx = ruleContext(config, this.names);
    this.mark = deps.masqueradeMark ?? N.masqueradeMark(config.masqueradeBit);
    this.now = deps.now ?? Date.now;
  }

  sync(input: SyncInput): SyncResult {
    const start = this.now();
    const pending: Pending = { addedChains: new Set(), deletedChains: new Set(),
      addedSets: new Set(), deletedSets: new Set() };
    this.pending = pending;
    const artifacts: Artifact[] = [];
    const del = this.deleteAgedStaleChains(start, pending);
    if (del.length > 0) artifacts.push({ kind: 'nft', text: del.text() });

    const full = this.needFullSync || input.changed === undefined;
    this.names.rotate(!full);
    const tx = this.tx();
    if (full) this.fullSync(tx, input, start, pending);
    else this.partialSync(tx, input, input.changed!, start, pending);
    if (tx.length > 0) artifacts.push({ kind: 'nft', text: tx.text() });
    return { full, artifacts, origins: this.origins };
  }

  commit(applied: boolean): void {
    const p = this.pending;
    this.pending = undefined;
    if (!applied) {
      this.needFullSync = true;
      this.staleChains.clear();
      return;
    }
    this.needFullSync = false;
    if (!p) return;
    for (const c of p.deletedChains) this.kernelChains.delete(c);
    for (const c of p.addedChains) this.kernelChains.add(c);
    for (const s of p.deletedSets) this.kernelSets.delete(s);
    for (const s of p.addedSets) this.kernelSets.add(s);
  }

  private deleteAgedStaleChains(start: number, pending: Pending): TxWriter {
    const tx = this.tx();
    const aged = [...this.staleChains].filter(([, t]) => t < start - STALE_CHAIN_DELETE_AFTER_MS)
      .map(([c]) => c).sort();
    for (const c of aged) {
      tx.delete('chain', c);
      this.staleChains.delete(c);
      pending.deletedChains.add(c);
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
    eps: readonly EndpointInfo[], pending: Pending): PortState {
    const objects = writeServicePort(tx, this.containers, this.ctx, key, svc, eps);
    for (const c of objects.chains) pending.addedChains.add(c);
    for (const s of objects.affinitySets) pending.addedSets.add(s);
    const servicePort = servicePortNameString(svc.name);
    for (const c of objects.chains) this.origins.set(c, originOf(servicePort, objects, c));
    for (const s of objects.affinitySets) this.origins.set(s, originOf(servicePort, objects, s));
    return { svc, objects };
  }

  private fullSync(tx: TxWriter, input: SyncInput, start: number, pending: Pending): void {
    this.setup(tx);
    this.origins.clear();
    const ports = new Map<string, PortState>();
    const activeChains = new Set<string>();
    const activeSets = new Set<string>();
    for (const key of [...input.services.keys()].sort()) {
      const svc = input.services.get(key)!;
      const st = this.writePort(tx, key, svc, input.endpoints.get(key) ?? [], pending);
      ports.set(key, st);
      for (const c of st.objects.chains) activeChains.add(c);
      for (const s of st.objects.affinitySets) activeSets.add(s);
    }
    this.ports = ports;
    this.names.settle();
    this.portsOfService.clear();
    for (const key of ports.keys()) this.indexPort(key, true);
    const existing = [...this.kernelChains].filter((c) => !pending.deletedChains.has(c)).sort();
    for (const c of existing) {
      if (!N.isServiceChainName(c)) continue;
      if (activeChains.has(c)) this.staleChains.delete(c);
      else this.markStale(tx, c, start);
    }
    for (const s of [...this.kernelSets].sort()) {
      if (N.isAffinitySetName(s) && !activeSets.has(s)) this.deleteSet(tx, s, pending);
    }
    for (const k of CONTAINER_ORDER) this.containers[k].cleanup(tx, []);
  }

  private markStale(tx: TxWriter, chain: string, start: number): void {
    tx.flush('chain', chain);
    this.staleChains.set(chain, start);
  }

  private deleteSet(tx: TxWriter, set: string, pending: Pending): void {
    tx.delete('set', set);
    pending.deletedSets.add(set);
    this.origins.delete(set);
  }

  private indexPort(key: string, present: boolean): void {
    const svc = serviceNameOfKey(key);
    let set = this.portsOfService.get(svc);
    if (present) {
      if (!set) this.portsOfService.set(svc, (set = new Set()));
      set.add(key);
    } else if (set) {
      set.delete(key);
      if (set.size === 0) this.portsOfService.delete(svc);
    }
  }

  /** Service-port keys to rewrite: every port, old or new, of every service that changed. */
  private affectedKeys(input: SyncInput, changed: ReadonlySet<string>): string[] {
    const keys = new Set<string>(changed);
    for (const k of changed) {
      for (const other of this.portsOfService.get(serviceNameOfKey(k)) ?? []) keys.add(other);
    }
    for (const k of keys) this.indexPort(k, input.services.has(k));
    return [...keys].sort();
  }

  private partialSync(tx: TxWriter, input: SyncInput, changed: ReadonlySet<string>,
    start: number, pending: Pending): void {
    const affected = this.affectedKeys(input, changed);
    const oldChains = new Set<string>();
    const oldSets = new Set<string>();
    const newChains = new Set<string>();
    const newSets = new Set<string>();
    const candidates = new Map<keyof Containers, string[]>();
    for (const key of affected) {
      const old = this.ports.get(key);
      if (old) {
        for (const c of old.objects.chains) oldChains.add(c);
        for (const s of old.objects.affinitySets) oldSets.add(s);
        for (const [k, el] of old.objects.elements) {
          this.containers[k].disown(key, el);
          let list = candidates.get(k);
          if (!list) candidates.set(k, (list = []));
          list.push(el);
        }
      }
    }
    for (const key of affected) {
      const svc = input.services.get(key);
      if (!svc) {
        this.ports.delete(key);
        continue;
      }
      const st = this.writePort(tx, key, svc, input.endpoints.get(key) ?? [], pending);
      this.ports.set(key, st);
      for (const c of st.objects.chains) newChains.add(c);
      for (const s of st.objects.affinitySets) newSets.add(s);
    }
    const stale = new Set<string>([...oldChains, ...this.staleChains.keys()]);
    for (const c of [...stale].sort()) {
      if (!this.kernelChains.has(c) || pending.deletedChains.has(c)) continue;
      if (newChains.has(c)) this.staleChains.delete(c);
      else {
        this.markStale(tx, c, start);
        if (!oldChains.has(c)) continue;
        this.origins.delete(c);
      }
    }
    for (const s of [...oldSets].sort()) {
      if (this.kernelSets.has(s) && !newSets.has(s)) this.deleteSet(tx, s, pending);
    }
    for (const k of CONTAINER_ORDER) this.containers[k].cleanup(tx, candidates.get(k) ?? []);
  }
}

function originOf(servicePort: string, objects: PortObjects, name: string): RuleOrigin {
  const endpoint = objects.endpointOf.get(name);
  return endpoint === undefined ? { servicePort } : { servicePort, endpoint };
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
