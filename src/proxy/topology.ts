// CategorizeEndpoints, as upstream pkg/proxy/topology.go: which endpoints a service port uses
// for Cluster and Local traffic policy on this node, with the serving-terminating fallback and
// topology hints (same node, then same zone).

import type { ProxierConfig } from './backend.js';
import type { EndpointInfo, ServicePortInfo } from './types.js';

/** Upstream ExternallyAccessible (per port, this family). */
export function externallyAccessible(svc: ServicePortInfo): boolean {
  return svc.nodePort !== 0 || svc.loadBalancerVIPs.length > 0 || svc.externalIPs.length > 0;
}

export function usesClusterEndpoints(svc: ServicePortInfo): boolean {
  return !svc.internalPolicyLocal || externallyAccessible(svc);
}

export function usesLocalEndpoints(svc: ServicePortInfo): boolean {
  return svc.internalPolicyLocal || (svc.externalPolicyLocal && externallyAccessible(svc));
}

export interface TopologyContext {
  readonly nodeName: string;
  /** The node's `topology.kubernetes.io/zone` label ('' when absent). */
  readonly zone: string;
  /** PreferSameTrafficDistribution feature gate (default on, as 1.33). */
  readonly preferSameNode?: boolean;
}

export interface CategorizedEndpoints {
  /** Cluster-policy endpoints; empty when the port never uses Cluster policy. */
  readonly cluster: readonly EndpointInfo[];
  /** Local-policy endpoints; empty when the port never uses Local policy. */
  readonly local: readonly EndpointInfo[];
  /** Union of both, in the sorted endpoint order (upstream: unspecified when merged). */
  readonly allReachable: readonly EndpointInfo[];
  /** Some usable endpoint exists somewhere in the cluster. */
  readonly hasAnyEndpoints: boolean;
}

/** The topology context of a proxier (zone label, PreferSameTrafficDistribution gate). */
export function topologyContextOf(config: ProxierConfig): TopologyContext {
  return {
    nodeName: config.nodeName,
    zone: config.nodeZone ?? '',
    preferSameNode: config.featureGates?.PreferSameTrafficDistribution ?? true,
  };
}

type TopologyMode = '' | 'PreferSameNode' | 'PreferSameZone';

function topologyMode(eps: readonly EndpointInfo[], ctx: TopologyContext): TopologyMode {
  let forNode = false;
  let allNode = true;
  let forZone = false;
  let allZone = true;
  for (const ep of eps) {
    if (!ep.ready) continue;
    if (!ep.nodeHints || ep.nodeHints.size === 0) allNode = false;
    else if (ep.nodeHints.has(ctx.nodeName)) forNode = true;
    if (!ep.zoneHints || ep.zoneHints.size === 0) allZone = false;
    else if (ep.zoneHints.has(ctx.zone)) forZone = true;
  }
  if ((ctx.preferSameNode ?? true) && allNode && forNode) return 'PreferSameNode';
  if (allZone && forZone) return 'PreferSameZone';
  return '';
}

function available(ep: EndpointInfo, mode: TopologyMode, ctx: TopologyContext): boolean {
  if (mode === 'PreferSameNode') return ep.nodeHints?.has(ctx.nodeName) ?? false;
  if (mode === 'PreferSameZone') return ep.zoneHints?.has(ctx.zone) ?? false;
  return true;
}

const servingTerminating = (ep: EndpointInfo): boolean => ep.serving && ep.terminating;
const isReady = (ep: EndpointInfo): boolean => ep.ready;

export function categorizeEndpoints(eps: readonly EndpointInfo[], svc: ServicePortInfo,
  ctx: TopologyContext): CategorizedEndpoints {
  let cluster: readonly EndpointInfo[] = [];
  let hasAny = false;
  let mode: TopologyMode = '';
  const usesCluster = usesClusterEndpoints(svc);
  if (usesCluster) {
    mode = topologyMode(eps, ctx);
    // Common case, no copy: no topology in use and every endpoint ready.
    cluster = mode === '' && eps.every(isReady) ? eps
      : eps.filter((ep) => ep.ready && available(ep, mode, ctx));
    if (cluster.length === 0) cluster = eps.filter(servingTerminating);
    hasAny = cluster.length > 0;
  }
  if (!usesLocalEndpoints(svc)) {
    return { cluster, local: [], allReachable: cluster, hasAnyEndpoints: hasAny };
  }
  let localReady = false;
  let localST = false;
  for (const ep of eps) {
    if (ep.ready) { hasAny = true; if (ep.isLocal) localReady = true; }
    else if (servingTerminating(ep)) { hasAny = true; if (ep.isLocal) localST = true; }
  }
  let local: EndpointInfo[] = [];
  if (localReady) local = eps.filter((ep) => ep.isLocal && ep.ready);
  else if (localST) local = eps.filter((ep) => ep.isLocal && servingTerminating(ep));
  if (!usesCluster) return { cluster: [], local, allReachable: local, hasAnyEndpoints: hasAny };
  if (mode === '' && !(localST && !localReady)) {
    return { cluster, local, allReachable: cluster, hasAnyEndpoints: hasAny };
  }
  const inUnion = new Set([...cluster, ...local].map((ep) => ep.endpoint));
  const allReachable = eps.filter((ep) => inUnion.has(ep.endpoint));
  return { cluster, local, allReachable, hasAnyEndpoints: hasAny };
}
