// What the tracer knows of the cluster: nodes (local addresses, pod CIDRs, the rule filter that
// runs in their netfilter hooks) and pods. Virtual and netns mode build the same picture; an
// offline trace of one dump is a one-node topology.

import { compileAddress } from './packet.js';
import type { Hook } from './iptables/interpreter.js';
import type { HopOrigin, World } from './world.js';

/** A mode's netfilter model on one node (iptables, nftables or ipvs). */
export interface NodeFilter {
  readonly mode: string;
  /** Addresses the mode itself makes local (ipvs binds service VIPs to kube-ipvs0). */
  isLocal?(ip: string): boolean;
  runHook(hook: Hook, worlds: readonly World[], env: FilterEnv): World[];
}

export interface FilterEnv {
  readonly where: string;
  isLocal(ip: string): boolean;
  readonly inIface?: string;
  readonly outIface?: string;
  readonly masqueradeAddress?: string;
  /** Entered through a bridge port (br_netfilter's physdev). */
  readonly bridged?: boolean;
}

export interface TraceNodeInfo {
  readonly name: string;
  /** The node's IPs on the underlay (`eth0`). */
  readonly nodeIPs: readonly string[];
  readonly podCIDRs: readonly string[];
  /** Bridge holding the pod gateway (`cni0`); its addresses are local too. */
  readonly bridge: string;
  readonly gatewayIPs: readonly string[];
  readonly underlayIface: string;
  readonly filter: NodeFilter;
  /** net.ipv4.conf.all.route_localnet in the node's namespace (kube-proxy's iptables mode
   *  sets it for localhost NodePorts): a packet with a 127/8 source may leave `lo`. */
  readonly routeLocalnet?: boolean;
  /** The pod network's VXLAN backend on this node (cni/backend.ts): the peers (by node name)
   *  whose pods it reaches through its VTEP, and the outer addresses. Absent: host-gw to all. */
  readonly vxlan?: VxlanInfo;
}

export interface VxlanInfo {
  /** The VTEP (`kdp-vxlan-1`). */
  readonly iface: string;
  readonly vni: number;
  /** UDP destination port of the outer packet (8472). */
  readonly port: number;
  /** Peer node → the outer source (this node's underlay IP) and destination (the peer's). */
  readonly peers: ReadonlyMap<string, { readonly src: string; readonly dst: string }>;
}

export interface TracePodInfo {
  /** `ns/name` */
  readonly name: string;
  readonly ip: string;
  readonly node: string;
  /** `PORT/PROTO` the pod listens on (listeners.ts); undefined: unknown, every port answers. */
  readonly listeners?: readonly string[];
}

/** What listens on the host side of the underlay (netns mode: kdp's own process). */
export interface HostListeners {
  /** The host's addresses on the underlay (the gateway). */
  readonly addresses: readonly string[];
  /** `PORT/PROTO` → who listens there (`the API server`). Any other port is refused. */
  readonly ports: ReadonlyMap<string, string>;
}

export interface Topology {
  readonly nodes: readonly TraceNodeInfo[];
  readonly pods: readonly TracePodInfo[];
  /** Undefined: unknown (virtual mode), nothing is judged. */
  readonly host?: HostListeners;
}

const LOOPBACK = compileAddress('127.0.0.0/8');

export function isLoopback(ip: string): boolean {
  return ip.includes(':') ? ip === '::1' : LOOPBACK(ip);
}

export function isLocalTo(node: TraceNodeInfo, ip: string): boolean {
  if (node.nodeIPs.includes(ip) || node.gatewayIPs.includes(ip) || node.filter.isLocal?.(ip)) return true;
  return ip.includes(':') ? ip === '::1' : LOOPBACK(ip);
}

export function nodeOwningPodIP(topo: Topology, ip: string): TraceNodeInfo | undefined {
  // Loops rather than find/some: called for every world at every hop.
  for (const n of topo.nodes) {
    for (const c of n.podCIDRs) if (compileAddress(c)(ip)) return n;
  }
  return undefined;
}

export function nodeWithIP(topo: Topology, ip: string): TraceNodeInfo | undefined {
  return topo.nodes.find((n) => n.nodeIPs.includes(ip));
}

export type { HopOrigin };
