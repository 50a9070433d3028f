// The topology of a live lab as pure data (built by lab.ts): which namespaces exist, which
// addresses each holds, which ports every responder answers on, and who sends a given source.
//
// One node namespace (node IPs on eth0, a cni0 bridge holding the first address of each pod
// CIDR, forwarding on), one namespace per local pod that sends a flow (an endpoint that also
// sends is that same pod: hairpin), one shared namespace for local endpoints that never send,
// and one world namespace behind the node's eth0 that answers for every other address.

import { cidrContains, nthAddress, writtenFamily } from '../../api/net.js';

export interface LabTarget {
  readonly protocol: 'tcp' | 'udp';
  /** Plain IP (no brackets). */
  readonly ip: string;
  readonly port: number;
}

export interface LabInput {
  /** Namespace name prefix, e.g. `kdp-t-1a2b3c`; namespaces are `<prefix>-<role>`. */
  readonly prefix: string;
  readonly nodeIPs: readonly string[];
  readonly podCIDRs: readonly string[];
  /** Sources that will send (plain IPs). */
  readonly sources: readonly string[];
  /** Every address:port a probe may reach: flow destinations and every possible endpoint. */
  readonly targets: readonly LabTarget[];
}

export interface LabPod {
  /** `p0`, `p1`, … for senders; `eps` for the shared endpoint-only namespace. */
  readonly role: string;
  readonly netns: string;
  readonly ips: readonly string[];
}

export interface LabPlan {
  readonly prefix: string;
  readonly nodeNetns: string;
  readonly worldNetns: string;
  readonly nodeIPs: readonly string[];
  readonly podCIDRs: readonly string[];
  /** First address of each pod CIDR (on cni0). */
  readonly gateways: readonly string[];
  readonly pods: readonly LabPod[];
  readonly tcpPorts: readonly number[];
  readonly udpPorts: readonly number[];
  /** Addresses the world serves that a probe may reach (its UDP listeners bind each). */
  readonly worldAddresses: readonly string[];
}

export function isV6(ip: string): boolean {
  return writtenFamily(ip) === 'IPv6';
}

export function inCIDR(ip: string, cidr: string): boolean {
  return isV6(ip) === isV6(cidr) && cidrContains(cidr, ip);
}

/** The first address after the network address (a bridge's gateway). */
export function firstAddress(cidr: string): string {
  return nthAddress(cidr, 1);
}

const LOOPBACK = new Set(['127.0.0.1', '::1']);

/** Addresses answered by the node itself (its own responder). */
export function isNodeAddress(plan: Pick<LabPlan, 'nodeIPs' | 'gateways'>, ip: string): boolean {
  return LOOPBACK.has(ip) || ip.startsWith('127.') || plan.nodeIPs.includes(ip)
    || plan.gateways.includes(ip);
}

export function planLab(input: LabInput): LabPlan {
  const gateways = input.podCIDRs.map(firstAddress);
  const base = { nodeIPs: input.nodeIPs, gateways };
  const isPodIP = (ip: string) => !isNodeAddress(base, ip)
    && input.podCIDRs.some((c) => inCIDR(ip, c));
  const senders = [...new Set(input.sources.filter(isPodIP))].sort();
  const endpointOnly = [...new Set(input.targets.map((t) => t.ip).filter(isPodIP))]
    .filter((ip) => !senders.includes(ip)).sort();
  const pods: LabPod[] = senders.map((ip, i) => ({
    role: `p${i}`, netns: `${input.prefix}-p${i}`, ips: [ip],
  }));
  if (endpointOnly.length) {
    pods.push({ role: 'eps', netns: `${input.prefix}-eps`, ips: endpointOnly });
  }
  const worldAddresses = [...new Set(input.targets.map((t) => t.ip)
    .filter((ip) => !isNodeAddress(base, ip) && !isPodIP(ip)))].sort();
  const ports = (p: 'tcp' | 'udp') => [...new Set(input.targets
    .filter((t) => t.protocol === p).map((t) => t.port))].sort((a, b) => a - b);
  return {
    prefix: input.prefix,
    nodeNetns: `${input.prefix}-node`,
    worldNetns: `${input.prefix}-world`,
    nodeIPs: input.nodeIPs, podCIDRs: input.podCIDRs, gateways, pods,
    tcpPorts: ports('tcp'), udpPorts: ports('udp'), worldAddresses,
  };
}

/** The role that sends a probe from `source`: `node`, `world` or a pod role. */
export function senderRole(plan: LabPlan, source: string): string {
  if (isNodeAddress(plan, source)) return 'node';
  return plan.pods.find((p) => p.role !== 'eps' && p.ips.includes(source))?.role ?? 'world';
}
