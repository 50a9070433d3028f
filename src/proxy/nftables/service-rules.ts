// The per-service-port part of upstream's syncProxyRules (nftables): which chains a port
// uses, the shared set/map elements it owns, and the rules of its chains, in upstream's order.

import { categorizeEndpoints, externallyAccessible, usesClusterEndpoints,
  usesLocalEndpoints, type TopologyContext } from '../topology.js';
import { servicePortNameString, type EndpointInfo, type ServicePortInfo } from '../types.js';
import type { ElementStorage } from './element-storage.js';
import * as N from './naming.js';
import type { TxWriter } from './tx-writer.js';

/** Proxier-wide facts the per-port rules need. */
export interface RuleContext {
  readonly words: N.FamilyWords;
  readonly topology: TopologyContext;
  readonly masqueradeAll: boolean;
  /** IfLocalNFT / IfNotLocalNFT words; undefined when no local-traffic detector. */
  readonly ifLocal?: string;
  readonly ifNotLocal?: string;
  /** Primary node IP of the family (source-range "allow from node" test), if any. */
  readonly nodeIP?: string;
  readonly containsIP: (cidr: string, ip: string) => boolean;
  /** Name bases (`N.hashAndTruncate`), possibly memoised across syncs. */
  readonly names: NameSource;
}

/** Where chain-name bases come from; the proxier memoises them between syncs. */
export interface NameSource {
  servicePort(svc: ServicePortInfo): string;
  endpoint(svc: ServicePortInfo, ep: EndpointInfo): string;
  /** Optional: the port's endpoints are now `keep` (memoising sources may forget others). */
  prune?(svc: ServicePortInfo, keep: readonly EndpointInfo[]): void;
}

/** Un-memoised names. */
export const DIRECT_NAMES: NameSource = {
  servicePort: (svc) => N.servicePortChainNameBase(svc.name),
  endpoint: (svc, ep) => N.endpointChainNameBase(svc.name, ep.ip, ep.port),
};

interface MemoEntry {
  readonly base: string;
  /** Endpoint `ip:port` → its name base (depends only on the port's name and the endpoint). */
  readonly endpoints: Map<string, string>;
}

/**
 * Names memoised per ServicePortInfo object, as upstream keeps them in its servicePortInfo /
 * endpointInfo (computed when the change trackers create those, i.e. once per change). The
 * trackers replace info objects on change, so identity is the right key; a port's endpoint map
 * is pruned when it has grown well past the endpoints the port currently has.
 */
export class MemoNames implements NameSource {
  private readonly ports = new WeakMap<ServicePortInfo, MemoEntry>();

  private entry(svc: ServicePortInfo): MemoEntry {
    let e = this.ports.get(svc);
    if (e === undefined) {
      e = { base: N.servicePortChainNameBase(svc.name), endpoints: new Map() };
      this.ports.set(svc, e);
    }
    return e;
  }

  servicePort(svc: ServicePortInfo): string {
    return this.entry(svc).base;
  }

  endpoint(svc: ServicePortInfo, ep: EndpointInfo): string {
    const m = this.entry(svc).endpoints;
    let b = m.get(ep.endpoint);
    if (b === undefined) {
      b = N.endpointChainNameBase(svc.name, ep.ip, ep.port);
      m.set(ep.endpoint, b);
    }
    return b;
  }

  /** Drops endpoint names of `svc` not in `keep` once the map has grown past twice its size. */
  prune(svc: ServicePortInfo, keep: readonly EndpointInfo[]): void {
    const m = this.entry(svc).endpoints;
    if (m.size <= 2 * keep.length + 16) return;
    const kept: Array<[string, string]> = [];
    for (const ep of keep) {
      const b = m.get(ep.endpoint);
      if (b !== undefined) kept.push([ep.endpoint, b]);
    }
    m.clear();
    for (const [k, v] of kept) m.set(k, v);
  }
}

/** The six shared containers whose elements are diffed. */
export interface Containers {
  readonly clusterIPs: ElementStorage;
  readonly serviceIPs: ElementStorage;
  readonly firewallIPs: ElementStorage;
  readonly noEndpointServices: ElementStorage;
  readonly noEndpointNodePorts: ElementStorage;
  readonly serviceNodePorts: ElementStorage;
}

/** What one service port put in the table (for stale detection and origins). */
export interface PortObjects {
  /** Per-service chains (service-, local-, external-, firewall-, endpoint-). */
  readonly chains: string[];
  readonly affinitySets: string[];
  /** Containers and keys this port ensured (parallel arrays). */
  readonly elementContainers: Array<keyof Containers>;
  readonly elementKeys: string[];
}

/** Chain-name bases of a port's endpoints, from the name source (one lookup each). */
function endpointBases(ctx: RuleContext, svc: ServicePortInfo,
  eps: readonly EndpointInfo[]): string[] {
  const out = new Array<string>(eps.length);
  for (let i = 0; i < eps.length; i++) out[i] = ctx.names.endpoint(svc, eps[i]!);
  return out;
}

/** Records what a port puts in the table while writing it (no closures: runs per port). */
class PortRecorder {
  readonly out: PortObjects = { chains: [], affinitySets: [], elementContainers: [],
    elementKeys: [] };

  constructor(private readonly tx: TxWriter, private readonly c: Containers,
    private readonly owner: string) {}

  chain(name: string): void {
    this.out.chains.push(name);
    this.tx.addChain(name);
    this.tx.flush('chain', name);
  }

  elem(k: keyof Containers, key: string, value?: string, comment?: string): void {
    this.c[k].ensure(this.tx, this.owner, key, value, comment);
    this.out.elementContainers.push(k);
    this.out.elementKeys.push(key);
  }
}

/**
 * Writes one service port: chain creation (add + flush), element ensures, the rules and the
 * affinity sets. `owner` is the service-port map key.
 */
export function writeServicePort(tx: TxWriter, c: Containers, ctx: RuleContext, owner: string,
  svc: ServicePortInfo, allEndpoints: readonly EndpointInfo[]): PortObjects {
  const { ipX, addrType } = ctx.words;
  const proto = svc.protocol.toLowerCase();
  const base = ctx.names.servicePort(svc);
  const clusterChain = N.SERVICE_POLICY_CLUSTER_PREFIX + base;
  const localChain = N.SERVICE_POLICY_LOCAL_PREFIX + base;
  const extChain = N.SERVICE_EXTERNAL_PREFIX + base;
  const fwChain = N.SERVICE_FIREWALL_PREFIX + base;
  const affinity = svc.sessionAffinityClientIP;

  const cat = categorizeEndpoints(allEndpoints, svc, ctx.topology);
  const rec = new PortRecorder(tx, c, owner);
  const out = rec.out;
  const reachable = cat.allReachable;
  const bases = endpointBases(ctx, svc, reachable);
  ctx.names.prune?.(svc, reachable);
  for (const b of bases) {
    rec.chain(N.ENDPOINT_PREFIX + b);
    if (affinity) out.affinitySets.push(N.AFFINITY_PREFIX + b);
  }
  const hasEndpoints = cat.hasAnyEndpoints;
  const usesClusterPolicyChain = cat.cluster.length > 0 && usesClusterEndpoints(svc);
  if (usesClusterPolicyChain) rec.chain(clusterChain);
  const usesLocalPolicyChain = cat.local.length > 0 && usesLocalEndpoints(svc);
  if (usesLocalPolicyChain) rec.chain(localChain);

  let internalChain = clusterChain;
  let hasInternalEndpoints = hasEndpoints;
  if (svc.internalPolicyLocal) {
    internalChain = localChain;
    if (cat.local.length === 0) hasInternalEndpoints = false;
  }
  let externalPolicyChain = clusterChain;
  let hasExternalEndpoints = hasEndpoints;
  if (svc.externalPolicyLocal) {
    externalPolicyChain = localChain;
    if (cat.local.length === 0) hasExternalEndpoints = false;
  }
  const usesExternalTrafficChain = hasEndpoints && externallyAccessible(svc);
  if (usesExternalTrafficChain) rec.chain(extChain);

  let internalVerdict = '';
  let externalVerdict = '';
  if (!hasEndpoints) {
    internalVerdict = externalVerdict = `goto ${N.REJECT_CHAIN}`;
  } else {
    if (!hasInternalEndpoints) internalVerdict = 'drop';
    if (!hasExternalEndpoints) externalVerdict = 'drop';
  }

  const keyTail = ` . ${proto} . ${svc.port}`;
  rec.elem('clusterIPs', svc.clusterIP);
  if (hasInternalEndpoints) {
    rec.elem('serviceIPs', svc.clusterIP + keyTail, `goto ${internalChain}`);
  } else {
    rec.elem('noEndpointServices', svc.clusterIP + keyTail, internalVerdict,
      servicePortNameString(svc.name));
  }

  for (const xip of svc.externalIPs) {
    if (hasEndpoints) rec.elem('serviceIPs', xip + keyTail, `goto ${extChain}`);
    if (!hasExternalEndpoints) {
      rec.elem('noEndpointServices', xip + keyTail, externalVerdict,
        servicePortNameString(svc.name));
    }
  }

  const usesFWChain = svc.loadBalancerVIPs.length > 0 && svc.loadBalancerSourceRanges.length > 0;
  if (usesFWChain) rec.chain(fwChain);
  for (const lbip of svc.loadBalancerVIPs) {
    if (hasEndpoints) rec.elem('serviceIPs', lbip + keyTail, `goto ${extChain}`);
    if (usesFWChain) rec.elem('firewallIPs', lbip + keyTail, `goto ${fwChain}`);
  }
  if (!hasExternalEndpoints) {
    for (const lbip of svc.loadBalancerVIPs) {
      rec.elem('noEndpointServices', lbip + keyTail, externalVerdict,
        servicePortNameString(svc.name));
    }
  }

  if (svc.nodePort !== 0) {
    const npKey = `${proto} . ${svc.nodePort}`;
    if (hasEndpoints) rec.elem('serviceNodePorts', npKey, `goto ${extChain}`);
    if (!hasExternalEndpoints) {
      rec.elem('noEndpointNodePorts', npKey, externalVerdict, servicePortNameString(svc.name));
    }
  }

  // Rules (upstream skips these for unchanged services on a partial sync; kdp does not call
  // this function for them at all).
  if (hasInternalEndpoints) {
    if (ctx.masqueradeAll) {
      tx.addRule(internalChain, `${ipX} daddr ${svc.clusterIP} jump ${N.MARK_MASQ_CHAIN}`);
    } else if (ctx.ifNotLocal !== undefined) {
      tx.addRule(internalChain,
        `${ipX} daddr ${svc.clusterIP} ${ctx.ifNotLocal} jump ${N.MARK_MASQ_CHAIN}`);
    }
  }
  if (usesExternalTrafficChain) {
    if (!svc.externalPolicyLocal) {
      tx.addRule(extChain, `jump ${N.MARK_MASQ_CHAIN}`);
    } else {
      if (ctx.ifLocal !== undefined) {
        tx.addRule(extChain, `${ctx.ifLocal} goto ${clusterChain}`, 'short-circuit pod traffic');
      }
      tx.addRule(extChain, `fib saddr type local jump ${N.MARK_MASQ_CHAIN}`,
        'masquerade local traffic');
      tx.addRule(extChain, `fib saddr type local goto ${clusterChain}`,
        'short-circuit local traffic');
    }
    if (hasExternalEndpoints) tx.addRule(extChain, `goto ${externalPolicyChain}`);
  }
  if (usesFWChain) writeFirewallRule(tx, ctx, svc, fwChain);
  if (affinity) {
    for (const a of out.affinitySets) {
      tx.addSetOrMap('set', a,
        `type ${addrType} ; flags dynamic,timeout ; timeout ${svc.stickyMaxAgeSeconds}s ;`);
    }
  }
  if (usesClusterPolicyChain) {
    const list = cat.cluster;
    writeServiceToEndpointRules(tx, ipX, affinity, clusterChain,
      list === reachable ? bases : endpointBases(ctx, svc, list));
  }
  if (usesLocalPolicyChain) {
    const list = cat.local;
    writeServiceToEndpointRules(tx, ipX, affinity, localChain,
      list === reachable ? bases : endpointBases(ctx, svc, list));
  }
  const masq = ` jump ${N.MARK_MASQ_CHAIN}`;
  const dnat = `meta l4proto ${proto} dnat to `;
  for (let i = 0; i < reachable.length; i++) {
    const ep = reachable[i]!;
    const chain = N.ENDPOINT_PREFIX + bases[i]!;
    tx.addRule(chain, `${ipX} saddr ${ep.ip}${masq}`);
    if (affinity) tx.addRule(chain, `update @${N.AFFINITY_PREFIX}${bases[i]!} { ${ipX} saddr }`);
    tx.addRule(chain, dnat + ep.endpoint);
  }
  return out;
}

function writeFirewallRule(tx: TxWriter, ctx: RuleContext, svc: ServicePortInfo,
  fwChain: string): void {
  const sources: string[] = [];
  let allowFromNode = false;
  for (const cidr of svc.loadBalancerSourceRanges) {
    sources.push(cidr);
    if (ctx.nodeIP !== undefined && ctx.containsIP(cidr, ctx.nodeIP)) allowFromNode = true;
  }
  if (allowFromNode) sources.push(...svc.loadBalancerVIPs);
  tx.addRule(fwChain, `${ctx.words.ipX} saddr != { ${sources.join(' , ')} } drop`);
}

/** `bases`: the chain-name bases of the endpoints, in order. */
function writeServiceToEndpointRules(tx: TxWriter, ipX: string, affinity: boolean,
  chain: string, bases: readonly string[]): void {
  if (affinity) {
    for (const b of bases) {
      tx.addRule(chain, `${ipX} saddr @${N.AFFINITY_PREFIX}${b} goto ${N.ENDPOINT_PREFIX}${b}`);
    }
  }
  let vmap = '';
  for (let i = 0; i < bases.length; i++) {
    vmap += `${i === 0 ? '' : ' , '}${i} : goto ${N.ENDPOINT_PREFIX}${bases[i]!}`;
  }
  tx.addRule(chain, `numgen random mod ${bases.length} vmap { ${vmap} }`);
}
