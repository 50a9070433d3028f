// The tracer's picture of a running cluster: nodes and pods from the API server, each node's
// current rule table from its kube-proxy's history, addresses resolved from what users type
// (`ns/name` pod, node name, `svc/ns/name:port`, or an IP).

import type { EndpointSlice, Node, Pod, Service } from '../api/types.js';
import { nthAddress } from '../api/net.js';
import type { Client } from '../client/types.js';
import { isKdpError, kdpError } from '../errors.js';
import { readSnapshot, rulesDir } from '../proxy/history.js';
import { proxyMode } from '../proxy/registry.js';
import { readClusterInfo } from '../cluster/cluster-file.js';
import { dataDirPaths } from '../cluster/data-dir.js';
import { KDP_MASQ_CHAIN, withKdpTables } from './kdp-masq.js';
import { buildFilter, type TraceMode } from './offline.js';
import { isDnsName, resolveDnsDestination, type DnsDestination } from './dns-destination.js';
import { DEFAULT_SPORT, endpointString, parseHostPort, type Packet, type TraceProtocol } from './packet.js';
import { foldArrivals, type TraceResult } from './result.js';
import { walk } from './walk.js';
import { podListeners } from './listeners.js';
import { readNetpolTable } from '../netpol/table-file.js';
import { netpolNodeView, withNetpol } from './netpol-stage.js';
import { isLoopback, type HostListeners, type NodeFilter, type Topology, type TraceNodeInfo, type TracePodInfo } from './topology.js';
import type { TraceEntry } from './walk.js';
import { vxlanInfoOf } from './overlay.js';
import { electLbOwners, type EndpointSlice as LbEndpointSlice } from '../cluster/lb-speaker.js';

const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
const PODS = { group: '', version: 'v1', resource: 'pods' } as const;
const SERVICES = { group: '', version: 'v1', resource: 'services' } as const;

/** `netpol: false` leaves the nodes' NetworkPolicy tables out: the network beneath the policies
 *  (what `kdp verify`'s model checks judge). Default: every table the node's kernel runs. */
export async function loadTopology(client: Client, dataDir: string, mode: TraceMode,
  o: { readonly netpol?: boolean } = {}): Promise<Topology> {
  const nodes = (await client.list<Node>(NODES)).items;
  const pods = (await client.list<Pod>(PODS)).items;
  const kdpTables = kdpTablesOf(dataDir);
  // A dual-stack pod is listed once per IP (primary first): lookups by IP find either, by name
  // the primary; sources and destinations pick the entry of the packet's family.
  const podInfos: TracePodInfo[] = pods
    .filter((p) => p.status?.podIP && p.spec?.nodeName && !p.spec?.hostNetwork)
    .flatMap((p) => (p.status!.podIPs?.length ? p.status!.podIPs.map((x) => x.ip) : [p.status!.podIP!])
      .map((ip) => ({ name: `${p.metadata.namespace}/${p.metadata.name}`, ip, node: p.spec!.nodeName!,
        listeners: podListeners(p) })));
  const vxlan = vxlanInfoOf(nodes);
  const infos: TraceNodeInfo[] = nodes.map((n) => {
    const name = n.metadata.name!;
    const podCIDRs = n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : []);
    const filter = familyFilter(mode, rulesDir(dataDir, name), kdpTables);
    return {
      name,
      nodeIPs: (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address),
      podCIDRs,
      bridge: 'cni0',
      gatewayIPs: podCIDRs.map((c) => nthAddress(c, 1)),
      underlayIface: 'eth0',
      filter: o.netpol === false ? filter : withNodeNetpol(filter, name, rulesDir(dataDir, name), podInfos),
      routeLocalnet: routeLocalnetOf(mode, rulesDir(dataDir, name)),
      ...(vxlan.has(name) ? { vxlan: vxlan.get(name)! } : {}),
    };
  });
  return { nodes: infos, pods: podInfos, host: await hostListenersOf(client, dataDir) };
}

/** The node's NetworkPolicy table (as its policy controller last applied it) in its forward
 *  hook; unchanged when the node has none (no controller ran there). */
function withNodeNetpol(filter: NodeFilter, node: string, dir: string, pods: readonly TracePodInfo[]): NodeFilter {
  const text = readNetpolTable(dir);
  if (text === undefined) return filter;
  const local = new Map(pods.filter((p) => p.node === node).map((p) => [p.ip, p.name] as [string, string]));
  return withNetpol(filter, netpolNodeView(node, text, local));
}

/** netns mode: the underlay gateway is kdp's own process, listening only as the API server (the
 *  `kubernetes` Service's endpoint). Virtual mode: unknown. */
async function hostListenersOf(client: Client, dataDir: string): Promise<HostListeners | undefined> {
  try {
    if (readClusterInfo(dataDirPaths(dataDir)).mode !== 'netns') return undefined;
  } catch {
    return undefined;
  }
  const slices = (await client.list<EndpointSlice>(
    { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', namespace: 'default' },
    { labelSelector: 'kubernetes.io/service-name=kubernetes' }).catch(() => ({ items: [] as EndpointSlice[] }))).items;
  const addresses = slices.flatMap((x) => (x.endpoints ?? []).flatMap((e) => e.addresses));
  const ports = new Map(slices.flatMap((x) => (x.ports ?? []).filter((p) => p.port)
    .map((p) => [`${p.port}/${p.protocol ?? 'TCP'}`, 'the API server (kdp, the kubernetes Service\'s endpoint)'] as [string, string])));
  return addresses.length ? { addresses, ports } : undefined;
}

/** A netns node's kernel also holds the tables kdp writes itself (kdp-masq.ts), whichever
 *  mode kube-proxy runs in; a virtual node holds kube-proxy's only. In iptables mode the
 *  snapshot is the kernel's whole `iptables-save` and already lists KDP-MASQ: added only when
 *  the snapshot (nftables: kube-proxy's table alone) does not. */
function kdpTablesOf(dataDir: string): (f: NodeFilter, snapshot: string) => NodeFilter {
  let info;
  try {
    info = readClusterInfo(dataDirPaths(dataDir));
  } catch {
    return (f) => f;
  }
  if (info.mode !== 'netns') return (f) => f;
  const cidrs = info.clusterCIDRs?.length ? info.clusterCIDRs : ['10.244.0.0/16'];
  return (f, snapshot) => (snapshot.includes(KDP_MASQ_CHAIN) ? f : withKdpTables(f, cidrs));
}

/** kube-proxy sets route_localnet=1 (in iptables mode) exactly when it serves localhost
 *  NodePorts (src/proxy/sysctls.ts); the mode's IPv4 table says which
 *  (`servesLocalhostNodePorts` of its registry entry). */
function routeLocalnetOf(mode: TraceMode, dir: string): boolean {
  try {
    // The snapshot's own mode: a node switched by its kube-proxy ConfigMap keeps the other's record.
    const snap = readSnapshot(dir, '@latest', 'IPv4');
    return proxyMode(snap.mode ?? mode).servesLocalhostNodePorts?.(snap.text) ?? false;
  } catch {
    return false;
  }
}

/** The node's filter for each family it has rules of; a packet runs through its own family's. */
function familyFilter(
  mode: TraceMode, dir: string, kdpTables: (f: NodeFilter, snapshot: string) => NodeFilter,
): NodeFilter {
  // `optional`: a missing family gives undefined rather than KDP_NOT_FOUND.
  const load = (family: 'IPv4' | 'IPv6', optional: boolean) => {
    let snap;
    try {
      snap = readSnapshot(dir, '@latest', family);
    } catch (e) {
      if (optional && isKdpError(e, 'KDP_NOT_FOUND')) return undefined;
      throw e;
    }
    // Each node's rules are read in the mode they were written in (kube-proxy's ConfigMap may
    // have switched it since the cluster started).
    return kdpTables(buildFilter(snap.mode ?? mode, snap.text, new Map(Object.entries(snap.origins))), snap.text);
  };
  // IPv4 is required only when there is no IPv6: a node without either fails as before.
  const v6 = load('IPv6', true);
  const v4 = load('IPv4', v6 !== undefined);
  if (!v4 || !v6) return (v4 ?? v6)!;
  return {
    mode: v4.mode,
    isLocal: (ip) => ((ip.includes(':') ? v6 : v4).isLocal?.(ip) ?? false),
    // A packet keeps its family through every NAT, so one trace's worlds share a family.
    runHook: (hook, worlds, env) =>
      (worlds[0]?.pkt.dst.includes(':') ? v6 : v4).runHook(hook, worlds, env),
  };
}

/** The address of `family` among `ips` (a pod's or node's), else the first. */
function ofFamily(ips: readonly string[], v6: boolean | undefined): string {
  return (v6 === undefined ? undefined : ips.find((ip) => ip.includes(':') === v6)) ?? ips[0]!;
}

export interface ResolvedSource {
  readonly ip: string;
  readonly entry: TraceEntry;
  readonly label: string;
}

/** SRC: a pod (`ns/name` or its IP), a node (name or IP), or an outside address. A pod or node
 *  named by name sends from its address of the destination's family (`towardsIP`). */
export function resolveSource(
  topo: Topology, text: string, towardsNode?: string, towardsIP?: string,
): ResolvedSource {
  const v6 = towardsIP === undefined ? undefined : towardsIP.includes(':');
  const byIP = topo.pods.find((p) => p.ip === text);
  const named = topo.pods.filter((p) => p.name === text || p.name === `default/${text}`);
  const pod = byIP ?? named.find((p) => v6 === undefined || p.ip.includes(':') === v6) ?? named[0];
  if (pod) return { ip: pod.ip, entry: { kind: 'pod', pod: pod.name, node: pod.node }, label: `pod ${pod.name}` };
  const node = topo.nodes.find((n) => n.name === text || n.nodeIPs.includes(text));
  if (node) {
    // To a loopback address the kernel's route is `lo`, whose source is the loopback address.
    const loop = towardsIP !== undefined && isLoopback(towardsIP) && !node.nodeIPs.includes(text);
    const ip = loop ? towardsIP : node.nodeIPs.includes(text) ? text : ofFamily(node.nodeIPs, v6);
    return { ip, entry: { kind: 'node', node: node.name }, label: `node ${node.name}` };
  }
  const ip = parseHostPort(text, 'SRC').ip;
  const via = topo.nodes.find((n) => n.name === towardsNode) ?? topo.nodes[0];
  if (!via) throw kdpError('KDP_TRACE', 'the cluster has no nodes');
  return { ip, entry: { kind: 'external', node: via.name }, label: `outside client ${ip}` };
}

export interface ResolvedDestination {
  readonly ip: string;
  readonly port?: number;
  readonly label: string;
  /** The node whose address this is (an outside client enters there). */
  readonly node?: string;
  readonly pod?: string;
  /** A DST given by name: what it resolved to. */
  readonly dns?: DnsDestination['dns'];
}

/** DST: `svc/ns/name:port` (port name or number), a pod, a node (with :port), a DNS name (with
 *  :port, resolved through `namespace`'s search list), or IP[:port]. */
export async function resolveDestination(
  client: Client, topo: Topology, text: string, namespace = 'default',
): Promise<ResolvedDestination> {
  const svc = /^svc\/(?:([^/]+)\/)?([^/:]+)(?::(.+))?$/.exec(text);
  if (svc) {
    const [, ns = 'default', name, portText] = svc;
    const s = await client.get<Service>({ ...SERVICES, namespace: ns }, name!).catch(() => {
      throw kdpError('KDP_TRACE', `service ${ns}/${name} not found`);
    });
    const ports = s.spec?.ports ?? [];
    const port = portText === undefined ? ports[0] : ports.find((p) => p.name === portText || String(p.port) === portText);
    if (!port) throw kdpError('KDP_TRACE', `service ${ns}/${name} has no port ${portText ?? ''}`.trim());
    const ip = s.spec?.clusterIP;
    if (!ip || ip === 'None') throw kdpError('KDP_TRACE', `service ${ns}/${name} has no cluster IP`);
    return { ip, port: port.port, label: `service ${ns}/${name}:${port.name || port.port}` };
  }
  const [host, portText] = splitPort(text);
  const pod = topo.pods.find((p) => p.name === host || p.name === `default/${host}` || p.ip === host);
  if (pod) return { ip: pod.ip, port: portOf(portText), label: `pod ${pod.name}`, pod: pod.name };
  const node = topo.nodes.find((n) => n.name === host || n.nodeIPs.includes(host));
  if (node) return { ip: node.nodeIPs[0]!, port: portOf(portText), label: `node ${node.name}`, node: node.name };
  if (isDnsName(host)) return resolveDnsDestination(client, host, portText, namespace);
  const hp = parseHostPort(text, 'DST');
  const lb = await loadBalancerOwner(client, hp.ip);
  if (lb) {
    return { ip: hp.ip, port: hp.port, node: lb.node,
      label: `${hp.ip} (LoadBalancer ${lb.service}, announced by ${lb.node})` };
  }
  return { ip: hp.ip, port: hp.port, label: hp.ip };
}

/** A LoadBalancer ingress address: its Service and the node that answers ARP for it (MetalLB
 *  layer-2 election, lb-speaker.ts), where an outside client's packet enters. */
async function loadBalancerOwner(client: Client, ip: string): Promise<{ service: string; node: string } | undefined> {
  const services = (await client.list<Service>(SERVICES)).items;
  const svc = services.find((s) => s.spec?.type === 'LoadBalancer' &&
    (s.status?.loadBalancer?.ingress ?? []).some((i) => i.ip === ip && i.ipMode !== 'Proxy'));
  if (!svc) return undefined;
  const [nodes, slices] = await Promise.all([
    client.list<Node>(NODES).then((l) => l.items),
    client.list<LbEndpointSlice>({ group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', namespace: svc.metadata.namespace },
      { labelSelector: `kubernetes.io/service-name=${svc.metadata.name}` }).then((l) => l.items)]);
  const node = electLbOwners([svc], nodes, slices, () => true).get(ip);
  return node ? { service: `${svc.metadata.namespace}/${svc.metadata.name}`, node } : undefined;
}

function splitPort(text: string): [string, string | undefined] {
  if (text.startsWith('[')) {
    const m = /^\[([^\]]+)\](?::(.*))?$/.exec(text);
    return m ? [m[1]!, m[2]] : [text, undefined];
  }
  const parts = text.split(':');
  return parts.length === 2 ? [parts[0]!, parts[1]] : [text, undefined];
}

function portOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  return parseHostPort(`0.0.0.0:${text}`, 'DST').port;
}

export interface ClusterTrace {
  readonly result: TraceResult;
  readonly source: ResolvedSource;
  readonly destination: ResolvedDestination;
  /** Pod to pod only: delivered with the sender's own source IP and no DNAT on every branch. */
  readonly natFree?: boolean;
}

export function traceResolved(
  topo: Topology, src: ResolvedSource, dst: ResolvedDestination, proto: TraceProtocol, sport = DEFAULT_SPORT,
  recordHops = true,
): ClusterTrace {
  if (proto !== 'icmp' && dst.port === undefined) {
    throw kdpError('KDP_TRACE', `destination ${dst.label} needs a port for ${proto}`);
  }
  const pkt: Packet = { src: src.ip, dst: dst.ip, proto, sport, dport: proto === 'icmp' ? 0 : dst.port! };
  const result = foldArrivals(pkt, walk(topo, src.entry, pkt, recordHops));
  const podToPod = src.entry.kind === 'pod' && dst.pod !== undefined;
  const natFree = podToPod
    ? result.verdict === 'ACCEPT' && result.destinations.every((d) =>
      !d.masquerade && d.sourceSeen === src.ip && d.destination === endpointString(dst.ip, pkt.dport || undefined))
    : undefined;
  return { result, source: src, destination: dst, ...(natFree === undefined ? {} : { natFree }) };
}
