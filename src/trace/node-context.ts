// What the walk looks up on every hop, made once: per topology (which node owns a pod IP, which
// pod has an IP, which node has an address) and per node (its `isLocal` test and the hook
// environments). Cached on the topology and node objects, which callers build once and then
// trace many packets through; a topology whose node or pod list has since grown is re-indexed.

import { compileAddress } from './packet.js';
import {
  isLocalTo, type FilterEnv, type HostListeners, type Topology, type TraceNodeInfo, type TracePodInfo,
} from './topology.js';

export interface TopologyIndex {
  /** The first node whose pod CIDRs hold `ip` (as `nodeOwningPodIP`). */
  podOwner(ip: string): TraceNodeInfo | undefined;
  /** The first pod with this IP, with its arrival label (`pod ns/name`). */
  podWithIP(ip: string): {
    readonly name: string; readonly reached: string; readonly listeners?: ReadonlySet<string>;
  } | undefined;
  /** The first node with this address on the underlay (as `nodeWithIP`). */
  nodeWithIP(ip: string): TraceNodeInfo | undefined;
  /** The host's listeners when `ip` is one of its underlay addresses. */
  hostAt(ip: string): HostListeners | undefined;
}

interface CachedIndex {
  readonly nodes: readonly TraceNodeInfo[];
  readonly nodeCount: number;
  readonly pods: readonly TracePodInfo[];
  readonly podCount: number;
  readonly index: TopologyIndex;
  readonly host: Topology['host'];
}

const topologyIndexes = new WeakMap<Topology, CachedIndex>();

export function topologyIndex(topo: Topology): TopologyIndex {
  const c = topologyIndexes.get(topo);
  if (c && c.nodes === topo.nodes && c.nodeCount === topo.nodes.length && c.pods === topo.pods &&
    c.podCount === topo.pods.length && c.host === topo.host) return c.index;
  const index = buildTopologyIndex(topo);
  topologyIndexes.set(topo, {
    nodes: topo.nodes, nodeCount: topo.nodes.length, pods: topo.pods, podCount: topo.pods.length, index,
    host: topo.host,
  });
  return index;
}

function buildTopologyIndex(topo: Topology): TopologyIndex {
  const owners: { node: TraceNodeInfo; test: (ip: string) => boolean }[] = [];
  for (const n of topo.nodes) for (const c of n.podCIDRs) owners.push({ node: n, test: compileAddress(c) });
  const pods = new Map<string, { name: string; reached: string; listeners?: ReadonlySet<string> }>();
  for (const p of topo.pods) {
    if (!pods.has(p.ip)) {
      pods.set(p.ip, { name: p.name, reached: `pod ${p.name}`, listeners: p.listeners && new Set(p.listeners) });
    }
  }
  const byIP = new Map<string, TraceNodeInfo>();
  for (const n of topo.nodes) for (const ip of n.nodeIPs) if (!byIP.has(ip)) byIP.set(ip, n);
  return {
    podOwner(ip) {
      for (let i = 0; i < owners.length; i++) if (owners[i]!.test(ip)) return owners[i]!.node;
      return undefined;
    },
    podWithIP: (ip) => pods.get(ip),
    nodeWithIP: (ip) => byIP.get(ip),
    hostAt: (ip) => (topo.host?.addresses.includes(ip) ? topo.host : undefined),
  };
}

/** The route out of a node for one destination, with the hook environments on that way. */
export interface NodeRoute {
  readonly iface: string;
  readonly forwardEnv: FilterEnv;
  readonly postroutingEnv: FilterEnv;
}

export interface NodeContext {
  readonly node: TraceNodeInfo;
  isLocal(ip: string): boolean;
  /** `node NAME`: the arrival label of a packet delivered to the node itself. */
  readonly deliveredReached: string;
  readonly outputEnv: FilterEnv;
  /** POSTROUTING of locally generated traffic to a local address (out on `lo`). */
  readonly loopbackEnv: FilterEnv;
  preroutingEnv(inIface: string | undefined): FilterEnv;
  /** INPUT: `lo` for the node's own traffic, else the interface it arrived on. */
  inputEnv(inIface: string | undefined, local: boolean): FilterEnv;
  /** Via the bridge (a local pod) or the underlay, for a v4 or v6 destination; `vxlan`: a pod
   *  of a VXLAN peer, out of the node's VTEP (source: the VTEP's address). */
  route(onBridge: boolean, v6: boolean, inIface: string | undefined, vxlan?: boolean): NodeRoute;
}

const nodeContexts = new WeakMap<TraceNodeInfo, NodeContext>();

export function nodeContext(node: TraceNodeInfo): NodeContext {
  let c = nodeContexts.get(node);
  if (!c) nodeContexts.set(node, (c = buildNodeContext(node)));
  return c;
}

/** The first address of the destination's family, else the first address, else ''. */
function sameFamily(ips: readonly string[], v6: boolean): string {
  for (const ip of ips) if (ip.includes(':') === v6) return ip;
  return ips[0] ?? '';
}

/** A cache of small objects keyed by an interface name (undefined allowed). */
function memo<T>(make: (k: string | undefined) => T): (k: string | undefined) => T {
  const m = new Map<string | undefined, T>();
  return (k) => {
    let v = m.get(k);
    if (v === undefined) m.set(k, (v = make(k)));
    return v;
  };
}

function buildNodeContext(node: TraceNodeInfo): NodeContext {
  const where = node.name;
  const isLocal = (ip: string): boolean => isLocalTo(node, ip);
  const prerouting = memo((inIface) => ({ where, isLocal, inIface, bridged: inIface === node.bridge }));
  const inputForwarded = memo((inIface) => ({ where, isLocal, inIface, bridged: inIface === node.bridge }));
  const inputLocal = memo((inIface) => ({ where, isLocal, inIface: 'lo', bridged: inIface === node.bridge }));
  // [onBridge][v6] → routes by incoming interface.
  const routes = [false, true].map((onBridge) => [false, true].map((v6) => memo((inIface): NodeRoute => {
    const iface = onBridge ? node.bridge : node.underlayIface;
    const src = sameFamily(onBridge ? node.gatewayIPs : node.nodeIPs, v6);
    return {
      iface,
      forwardEnv: { where, isLocal, inIface, outIface: iface, bridged: inIface === node.bridge },
      postroutingEnv: { where, isLocal, inIface, outIface: iface, masqueradeAddress: src },
    };
  })));
  const tunnel = memo((inIface): NodeRoute => {
    const iface = node.vxlan?.iface ?? node.underlayIface;
    const src = sameFamily(node.podCIDRs.map((c) => c.split('/')[0]!), false);
    return {
      iface,
      forwardEnv: { where, isLocal, inIface, outIface: iface, bridged: inIface === node.bridge },
      postroutingEnv: { where, isLocal, inIface, outIface: iface, masqueradeAddress: src },
    };
  });
  return {
    node,
    isLocal,
    deliveredReached: `node ${node.name}`,
    outputEnv: { where, isLocal, outIface: undefined },
    loopbackEnv: { where, isLocal, outIface: 'lo' },
    preroutingEnv: prerouting,
    inputEnv: (inIface, local) => (local ? inputLocal(inIface) : inputForwarded(inIface)),
    route: (onBridge, v6, inIface, vxlan) => (vxlan ? tunnel(inIface) : routes[onBridge ? 1 : 0]![v6 ? 1 : 0]!(inIface)),
  };
}
