// One service port's share of an ipvs sync (the body of upstream syncProxyRules' loop):
// virtual servers for the ClusterIP, externalIPs, LB VIPs and node IPs, their real servers,
// the addresses to bind on kube-ipvs0, and the ipset entries.

import { DUMMY_DEVICE, hostPrefix } from '../../ruleset/ipvs/addresses.js';
import { virtualServerKey } from '../../ruleset/ipvs/ipvsadm.js';
import type { IpvsProtocol } from '../../ruleset/ipvs/types.js';
import { cidrContains } from '../../api/net.js';
import { categorizeEndpoints, type TopologyContext } from '../topology.js';
import { servicePortNameString, type EndpointInfo, type ServicePortInfo } from '../types.js';
import type { GracefulTermination } from './graceful-termination.js';
import * as S from './ipset.js';
import type { ActiveIpSets } from './ipset.js';
import type { NoNodeAccessEntry } from './iptables-rules.js';
import type { IpvsModel, RealEntry, VirtualServerSpec } from './ipvs-model.js';

/** Everything one sync accumulates across service ports. */
export interface SyncContext {
  readonly ipvs: IpvsModel;
  readonly graceful: GracefulTermination;
  readonly sets: ActiveIpSets;
  readonly scheduler: string;
  readonly topology: TopologyContext;
  /** The node IP used for the LB source-range check (upstream proxier.nodeIP). */
  readonly nodeIP: string | undefined;
  /** Node addresses except kube-ipvs0's (upstream nodeAddressSet). */
  readonly nodeAddresses: ReadonlySet<string>;
  /** Addresses for node-port virtual servers (upstream nodeIPs). */
  readonly nodePortIPs: readonly string[];
  readonly initialSync: boolean;
  /** Addresses on kube-ipvs0 before this sync (upstream alreadyBoundAddrs). */
  readonly alreadyBound: ReadonlySet<string>;
  readonly activeServices: Set<string>;
  readonly activeBindAddrs: Set<string>;
  readonly lbNoNodeAccess: NoNodeAccessEntry[];
  /** Virtual-server key → service port (real-server origins derive from the model). */
  readonly origins: Map<string, string>;
}

function virtualServer(ctx: SyncContext, svc: ServicePortInfo, address: string,
  port: number): VirtualServerSpec {
  return {
    protocol: svc.protocol as IpvsProtocol,
    address,
    port,
    scheduler: ctx.scheduler,
    ...(svc.sessionAffinityClientIP ? { persistence: svc.stickyMaxAgeSeconds } : {}),
    // FlagSourceHash (0x10) for the mh scheduler, which ipvsadm names mh-port.
    schedFlags: ctx.scheduler === 'mh' ? ['mh-port'] : [],
  };
}

/** The endpoints of a service port for Cluster and for Local policy (CategorizeEndpoints). */
interface Chosen {
  readonly cluster: readonly EndpointInfo[];
  readonly local: readonly EndpointInfo[];
}

const realServer = (ep: EndpointInfo) =>
  ({ address: ep.ip, port: ep.port, weight: 1, forward: 'masq' as const });

/** Upstream syncService + syncEndpoint for one virtual server. */
function syncVirtualServer(ctx: SyncContext, servicePort: string, chosen: Chosen,
  spec: VirtualServerSpec, bind: boolean, onlyLocal: boolean): void {
  const key = virtualServerKey(spec);
  ctx.ipvs.ensureVirtualServer(spec);
  ctx.activeServices.add(key);
  if (bind && !ctx.alreadyBound.has(spec.address) && !ctx.activeBindAddrs.has(spec.address)) {
    ctx.ipvs.record(`ip addr add ${hostPrefix(spec.address)} dev ${DUMMY_DEVICE}`);
  }
  if (bind) ctx.activeBindAddrs.add(spec.address);
  ctx.origins.set(key, servicePort);
  const eps = onlyLocal && chosen.local.length > 0 ? chosen.local : chosen.cluster;
  // The live map: additions below are all in `wanted`, deletions during iteration are safe.
  const current = ctx.ipvs.realServerMap(key);
  if (current === undefined || current.size === 0) {
    // Nothing to keep, update or delete (a first sync): add each endpoint once.
    for (const ep of eps) ctx.ipvs.setRealServer(key, realServer(ep), ep.endpoint);
    return;
  }
  const wanted = new Set<string>();
  const reset = ctx.initialSync && [...current.values()].some((d) => d.rs.weight !== 1);
  for (const ep of eps) {
    if (wanted.has(ep.endpoint)) continue; // duplicate endpoint string
    wanted.add(ep.endpoint);
    if (current.has(ep.endpoint)) {
      if (reset) ctx.ipvs.setRealServer(key, realServer(ep), ep.endpoint);
      if (!ctx.graceful.has(key, ep.endpoint)) continue;
      ctx.graceful.moveOut(ctx.ipvs, key, ep.endpoint);
    }
    ctx.ipvs.setRealServer(key, realServer(ep), ep.endpoint);
  }
  for (const rsKey of current.keys()) {
    if (wanted.has(rsKey) || ctx.graceful.has(key, rsKey)) continue;
    ctx.graceful.gracefulDelete(ctx.ipvs, key, rsKey);
  }
}

export function syncServicePort(ctx: SyncContext, svc: ServicePortInfo,
  eps: readonly EndpointInfo[]): void {
  const proto = svc.protocol.toLowerCase();
  const { sets } = ctx;
  const chosen: Chosen = categorizeEndpoints(eps, svc, ctx.topology);
  const name = servicePortNameString(svc.name);
  for (const ep of eps) {
    if (ep.isLocal && ep.ip !== '' && ep.port !== 0) {
      sets.insert(S.KUBE_LOOP_BACK, S.entry.ipPortIp(ep.ip, proto, ep.port, ep.ip));
    }
  }
  sets.insert(S.KUBE_CLUSTER_IP, S.entry.ipPort(svc.clusterIP, proto, svc.port));
  syncVirtualServer(ctx, name, chosen, virtualServer(ctx, svc, svc.clusterIP, svc.port), true,
    svc.internalPolicyLocal);

  for (const ip of svc.externalIPs) {
    const e = S.entry.ipPort(ip, proto, svc.port);
    sets.insert(svc.externalPolicyLocal ? S.KUBE_EXTERNAL_IP_LOCAL : S.KUBE_EXTERNAL_IP, e);
    syncVirtualServer(ctx, name, chosen, virtualServer(ctx, svc, ip, svc.port),
      !ctx.nodeAddresses.has(ip), svc.externalPolicyLocal);
  }

  for (const ip of svc.loadBalancerVIPs) {
    syncLoadBalancerSets(ctx, svc, ip, proto);
    syncVirtualServer(ctx, name, chosen, virtualServer(ctx, svc, ip, svc.port),
      !ctx.nodeAddresses.has(ip), svc.externalPolicyLocal);
  }

  if (svc.nodePort !== 0) {
    // Upstream `continue`s here: no node IPs also skips the health-check entry below.
    if (ctx.nodePortIPs.length === 0) return;
    syncNodePortSets(ctx, svc, proto);
    for (const ip of ctx.nodePortIPs) {
      syncVirtualServer(ctx, name, chosen, virtualServer(ctx, svc, ip, svc.nodePort), false,
        svc.externalPolicyLocal);
    }
  }

  if (svc.healthCheckNodePort !== 0) {
    sets.insert(S.KUBE_HEALTH_CHECK_NODE_PORT, S.entry.port(svc.healthCheckNodePort));
  }
}

function syncLoadBalancerSets(ctx: SyncContext, svc: ServicePortInfo, ip: string,
  proto: string): void {
  const { sets } = ctx;
  const e = S.entry.ipPort(ip, proto, svc.port);
  sets.insert(S.KUBE_LOAD_BALANCER, e);
  if (svc.externalPolicyLocal) sets.insert(S.KUBE_LOAD_BALANCER_LOCAL, e);
  if (svc.loadBalancerSourceRanges.length === 0) return;
  sets.insert(S.KUBE_LOAD_BALANCER_FW, e);
  let allowFromNode = false;
  for (const cidr of svc.loadBalancerSourceRanges) {
    sets.insert(S.KUBE_LOAD_BALANCER_SOURCE_CIDR, S.entry.ipPortNet(ip, proto, svc.port, cidr));
    if (ctx.nodeIP !== undefined && cidrContains(cidr, ctx.nodeIP)) allowFromNode = true;
  }
  if (allowFromNode) {
    sets.insert(S.KUBE_LOAD_BALANCER_SOURCE_IP, S.entry.ipPortIp(ip, proto, svc.port, ip));
  } else {
    ctx.lbNoNodeAccess.push({ ip, protocol: proto, port: svc.port });
  }
}

const NODE_PORT_SETS: Record<string, [string, string]> = {
  tcp: [S.KUBE_NODE_PORT_TCP, S.KUBE_NODE_PORT_LOCAL_TCP],
  udp: [S.KUBE_NODE_PORT_UDP, S.KUBE_NODE_PORT_LOCAL_UDP],
  sctp: [S.KUBE_NODE_PORT_SCTP, S.KUBE_NODE_PORT_LOCAL_SCTP],
};

function syncNodePortSets(ctx: SyncContext, svc: ServicePortInfo, proto: string): void {
  const pair = NODE_PORT_SETS[proto];
  if (pair === undefined) return;
  const entries = proto === 'sctp'
    ? ctx.nodePortIPs.map((ip) => S.entry.ipPort(ip, proto, svc.nodePort))
    : [S.entry.port(svc.nodePort)];
  for (const e of entries) ctx.sets.insert(pair[0], e);
  if (svc.externalPolicyLocal) for (const e of entries) ctx.sets.insert(pair[1], e);
}
