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

interface EpNames {
  readonly ep: EndpointInfo;
  readonly chain: string;
  readonly affinity: string;
}

/**
 * Writes one service port: chain creation (add + flush), element ensures and, unless
 * `skipRules`, the rules and affinity sets. `owner` is the service-port map key.
 */
export function writeServicePort(tx: TxWriter, c: Containers, ctx: RuleContext, owner: string,
  svc: ServicePortInfo, allEndpoints: readonly EndpointInfo[]): PortObjects {
  const { ipX, addrType } = ctx.words;
  const proto = svc.protocol.toLowerCase();
  const nameString = servicePortNameString(svc.name);
  const base = ctx.names.servicePort(svc);
  const clusterChain = N.SERVICE_POLICY_CLUSTER_PREFIX + base;
  const localChain = N.SERVICE_POLICY_LOCAL_PREFIX + base;
  const extChain = N.SERVICE_EXTERNAL_PREFIX + base;
  const fwChain = N.SERVICE_FIREWALL_PREFIX + base;
  const affinity = svc.sessionAffinityClientIP;

  const cat = categorizeEndpoints(allEndpoints, svc, ctx.topology);
  const names = new Map<string, EpNames>();
  const namesOf = (ep: EndpointInfo): EpNames => {
    let n = names.get(ep.endpoint);
    if (!n) {
      const b = ctx.names.endpoint(svc, ep);
      n = { ep, chain: N.ENDPOINT_PREFIX + b, affinity: N.AFFINITY_PREFIX + b };
      names.set(ep.endpoint, n);
    }
    return n;
  };
  const out: PortObjects = { chains: [], affinitySets: [], elementContainers: [],
    elementKeys: [] };
  const ensureChain = (name: string): void => {
    out.chains.push(name);
    tx.addChain(name);
    tx.flush('chain', name);
  };
  const elem = (k: keyof Containers, key: string, value?: string, comment?: string): void => {
    c[k].ensure(tx, owner, key, value, comment);
    out.elementContainers.push(k);
    out.elementKeys.push(key);
  };

  const reachable = cat.allReachable.map(namesOf);
  ctx.names.prune?.(svc, cat.allReachable);
  for (const n of reachable) {
    ensureChain(n.chain);
    if (affinity) out.affinitySets.push(n.affinity);
  }
  const hasEndpoints = cat.hasAnyEndpoints;
  const usesClusterPolicyChain = cat.cluster.length > 0 && usesClusterEndpoints(svc);
  if (usesClusterPolicyChain) ensureChain(clusterChain);
  const usesLocalPolicyChain = cat.local.length > 0 && usesLocalEndpoints(svc);
  if (usesLocalPolicyChain) ensureChain(localChain);

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
  if (usesExternalTrafficChain) ensureChain(extChain);

  let internalVerdict = '';
  let externalVerdict = '';
  if (!hasEndpoints) {
    internalVerdict = externalVerdict = `goto ${N.REJECT_CHAIN}`;
  } else {
    if (!hasInternalEndpoints) internalVerdict = 'drop';
    if (!hasExternalEndpoints) externalVerdict = 'drop';
  }

  const port = String(svc.port);
  const svcKey = (ip: string): string => `${ip} . ${proto} . ${port}`;
  elem('clusterIPs', svc.clusterIP);
  if (hasInternalEndpoints) elem('serviceIPs', svcKey(svc.clusterIP), `goto ${internalChain}`);
  else elem('noEndpointServices', svcKey(svc.clusterIP), internalVerdict, nameString);

  for (const xip of svc.externalIPs) {
    if (hasEndpoints) elem('serviceIPs', svcKey(xip), `goto ${extChain}`);
    if (!hasExternalEndpoints) elem('noEndpointServices', svcKey(xip), externalVerdict, nameString);
  }

  const usesFWChain = svc.loadBalancerVIPs.length > 0 && svc.loadBalancerSourceRanges.length > 0;
  if (usesFWChain) ensureChain(fwChain);
  for (const lbip of svc.loadBalancerVIPs) {
    if (hasEndpoints) elem('serviceIPs', svcKey(lbip), `goto ${extChain}`);
    if (usesFWChain) elem('firewallIPs', svcKey(lbip), `goto ${fwChain}`);
  }
  if (!hasExternalEndpoints) {
    for (const lbip of svc.loadBalancerVIPs) {
      elem('noEndpointServices', svcKey(lbip), externalVerdict, nameString);
    }
  }

  if (svc.nodePort !== 0) {
    const npKey = `${proto} . ${svc.nodePort}`;
    if (hasEndpoints) elem('serviceNodePorts', npKey, `goto ${extChain}`);
    if (!hasExternalEndpoints) elem('noEndpointNodePorts', npKey, externalVerdict, nameString);
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
    for (const n of reachable) {
      tx.addSetOrMap('set', n.affinity,
        `type ${addrType} ; flags dynamic,timeout ; timeout ${svc.stickyMaxAgeSeconds}s ;`);
    }
  }
  if (usesClusterPolicyChain) {
    writeServiceToEndpointRules(tx, ipX, affinity, clusterChain, cat.cluster.map(namesOf));
  }
  if (usesLocalPolicyChain) {
    writeServiceToEndpointRules(tx, ipX, affinity, localChain, cat.local.map(namesOf));
  }
  for (const n of reachable) {
    tx.addRule(n.chain, `${ipX} saddr ${n.ep.ip} jump ${N.MARK_MASQ_CHAIN}`);
    if (affinity) tx.addRule(n.chain, `update @${n.affinity} { ${ipX} saddr }`);
    tx.addRule(n.chain, `meta l4proto ${proto} dnat to ${n.ep.endpoint}`);
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

function writeServiceToEndpointRules(tx: TxWriter, ipX: string, affinity: boolean,
  chain: string, eps: readonly EpNames[]): void {
  if (affinity) {
    for (const n of eps) tx.addRule(chain, `${ipX} saddr @${n.affinity} goto ${n.chain}`);
  }
  const vmap = eps.map((n, i) => `${i} : goto ${n.chain}`).join(' , ');
  tx.addRule(chain, `numgen random mod ${eps.length} vmap { ${vmap} }`);
}
