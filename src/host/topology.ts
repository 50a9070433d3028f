// The netns-mode lab (DESIGN.md §4, cni.md §8.5): an underlay namespace holding a bridge, one
// namespace per node joined to it by a veth pair (`eth0` in the node holds the node IP), host-gw
// routes between nodes (`<peer podCIDR> via <peer nodeIP>`, no NAT between pods) and a per-node
// masquerade that excludes the cluster CIDR. IPv6 (IPv6-only or dual-stack clusters): the underlay
// bridge and every eth0 also hold an address of `underlay.cidr6`, and routes, forwarding and
// masquerade are kept per family. The shape is data (`netns/topology.yaml`); this
// module only builds it. Every namespace is recorded in the host state file before it is made,
// and carries the cluster prefix `kdp-<id>`, so cleanup is exact. The host is never touched.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { cidrList, nthAddress } from '../api/net.js';
import { kdpError } from '../errors.js';
import type { HostExec } from './exec.js';
import { buildHosts, SINGLE_HOST, type HostLayout, type Hosts, type HostUnderlay } from './hosts.js';
import { ensureNetns, ipBatch, linkExists, setSysctl } from './netns.js';
import { linkName } from './names.js';
import type { HostStateFile } from './state.js';

export interface TopologySpec {
  readonly underlay: {
    namespace: string; bridge: string; cidr: string; gateway?: string; firstNodeHost: number;
    /** IPv6 subnet of the underlay (used when the cluster has IPv6 pod CIDRs). */
    cidr6?: string; gateway6?: string;
  };
  readonly node: { uplink: string; podBridge: string };
  readonly clusterCIDR: string;
}

export interface TopologyNode {
  readonly name: string;
  /** The IPv4 underlay address (eth0). */
  readonly ip: string;
  /** The IPv6 underlay address (eth0), on IPv6 and dual-stack clusters. */
  readonly ip6?: string;
  /** The simulated host (0-based, hosts.ts) whose underlay the node attaches to; default 0. */
  readonly host?: number;
}

export interface RoutePeer {
  /** The peer's node IPs (InternalIPs); each pod CIDR goes via the one of its family. */
  readonly ips: readonly string[];
  readonly podCIDRs: readonly string[];
}

export const DEFAULT_TOPOLOGY_FILE = fileURLToPath(new URL('../../netns/topology.yaml', import.meta.url));

export function loadTopology(path = DEFAULT_TOPOLOGY_FILE): TopologySpec {
  const raw = parseYaml(readFileSync(path, 'utf8')) as Partial<TopologySpec> | null;
  if (!raw?.underlay?.bridge || !raw.underlay.cidr || !raw.node?.uplink || !raw.clusterCIDR) {
    throw kdpError('KDP_CONFIG', `${path}: underlay.bridge, underlay.cidr, node.uplink and clusterCIDR are required`);
  }
  return raw as TopologySpec;
}

/** The cluster id: a short hash of the (absolute) data dir, so two clusters never clash. */
export function clusterId(dataDir: string): string {
  return createHash('sha256').update(dataDir).digest('hex').slice(0, 6);
}

/** `kdp-<id>`: every namespace of the cluster starts with it (cleanup sweeps by it). */
export function clusterPrefix(id: string): string {
  return `kdp-${id}`;
}

/** Node IP of node index i (0-based) from the underlay CIDR: 172.18.0.(i+2) by default. */
export function nodeIP(spec: TopologySpec, index: number): string {
  const [base] = spec.underlay.cidr.split('/');
  const o = base!.split('.').map(Number);
  const n = ((o[0]! << 24) | (o[1]! << 16) | (o[2]! << 8) | o[3]!) + spec.underlay.firstNodeHost + index;
  return [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
}

/** IPv6 node IP of node index i from `underlay.cidr6` (fc00:f853:ccd:e793::2, ...); undefined
 *  when the topology has no IPv6 underlay. */
export function nodeIP6(spec: TopologySpec, index: number): string | undefined {
  const c = spec.underlay.cidr6;
  return c ? nthAddress(c, spec.underlay.firstNodeHost + index) : undefined;
}

export interface Topology {
  readonly spec: TopologySpec;
  readonly prefix: string;
  readonly underlayNetns: string;
  /** The simulated hosts (one unless the layout says more). */
  readonly hosts: Hosts;
  /** The underlay of the host a started node is on (host 1 for a node not started here). */
  hostOf(node: string): HostUnderlay;
  nodeNetns(node: string): string;
  ensureUnderlay(): Promise<void>;
  ensureNodeNetns(node: TopologyNode): Promise<void>;
  /** Makes the node's host-gw routes (those via its uplink) exactly `peers` (routes of peers gone
   *  are removed; routes on other links, the VXLAN backend's, are left alone). */
  syncRoutes(node: string, peers: readonly RoutePeer[]): Promise<void>;
  /** The node's underlay link (its veth on the bridge) down or up: a cable pulled or back. */
  setUplink(node: string, up: boolean): Promise<void>;
}

/** A locally administered MAC from the node's IPv4 underlay address: 02:6b:a.b.c.d in hex. */
export function uplinkMac(ip: string): string {
  return ['02', '6b', ...ip.split('.').map((o) => Number(o).toString(16).padStart(2, '0'))].join(':');
}

export interface TopologyDeps {
  readonly exec: HostExec;
  readonly state: HostStateFile;
  readonly id: string;
  readonly spec?: TopologySpec;
  /** The cluster's pod CIDRs (`kdp up --cluster-cidr`); default the spec's `clusterCIDR`. An
   *  IPv6 one turns on the IPv6 underlay, forwarding and ip6tables masquerade. */
  readonly clusterCIDRs?: readonly string[];
  /** Simulated hosts (hosts.ts); default one. */
  readonly hosts?: HostLayout;
}

export function buildTopology(d: TopologyDeps): Topology {
  const spec = d.spec ?? loadTopology();
  const prefix = clusterPrefix(d.id);
  const underlayNetns = `${prefix}-${spec.underlay.namespace}`;
  const prefixLen = spec.underlay.cidr.split('/')[1];
  const nodeNetns = (node: string) => `${prefix}-${node}`;
  const clusterCIDRs = d.clusterCIDRs ?? cidrList(spec.clusterCIDR);
  const v4CIDRs = clusterCIDRs.filter((c) => !c.includes(':'));
  const v6CIDRs = clusterCIDRs.filter((c) => c.includes(':'));
  const v6 = v6CIDRs.length > 0 && spec.underlay.cidr6 !== undefined;
  const prefixLen6 = spec.underlay.cidr6?.split('/')[1];
  const hosts = buildHosts({ exec: d.exec, state: d.state, spec, prefix, layout: d.hosts ?? SINGLE_HOST });
  const hostIndex = new Map<string, number>();
  const hostOf = (node: string) => hosts.underlay(hostIndex.get(node) ?? 0);

  async function recordAndEnsure(ns: string): Promise<void> {
    await d.state.addNetns(ns);
    await ensureNetns(d.exec, ns);
  }

  return {
    spec, prefix, underlayNetns, nodeNetns, hosts, hostOf,
    async ensureUnderlay() {
      await recordAndEnsure(underlayNetns);
      const br = spec.underlay.bridge;
      if (!(await linkExists(d.exec, underlayNetns, br))) {
        await ipBatch(d.exec, underlayNetns, [`link add ${br} type bridge`]);
      }
      const gw = spec.underlay.gateway;
      const gw6 = v6 ? spec.underlay.gateway6 : undefined;
      await ipBatch(d.exec, underlayNetns, [
        ...(gw ? [`addr replace ${gw}/${prefixLen} dev ${br}`] : []),
        ...(gw6 ? [`addr replace ${gw6}/${prefixLen6} dev ${br} nodad`] : []),
        `link set ${br} up`]);
      await hosts.ensure();
    },
    async ensureNodeNetns(node) {
      const ns = nodeNetns(node.name);
      await recordAndEnsure(ns);
      hostIndex.set(node.name, node.host ?? 0);
      const host = hostOf(node.name);
      const peer = linkName(node.name);
      const up = spec.node.uplink;
      if (!(await linkExists(d.exec, ns, up))) {
        // A peer left from the node's previous namespace (deleted namespaces are torn down
        // asynchronously by the kernel, a rebooted node's link can outlive it) goes first.
        if (await linkExists(d.exec, host.netns, peer)) await ipBatch(d.exec, host.netns, [`link del ${peer}`]);
        await ipBatch(d.exec, host.netns, [`link add ${peer} type veth peer name ${up} netns ${ns}`]);
      }
      await ipBatch(d.exec, host.netns, [`link set ${peer} master ${host.bridge} up`]);
      // A default route (as on a real node), so node → ClusterIP has a route before DNAT: the
      // gateway of the node's host (host 1's is the underlay's).
      const gw = host.index === 0 ? spec.underlay.gateway : host.gateway;
      const ip6 = v6 ? node.ip6 : undefined;
      const gw6 = spec.underlay.gateway6;
      // No DAD: the address is usable at once (a tentative one drops the first packets).
      // A fixed MAC, as a machine's NIC has: a node booted anew is still the address its peers
      // have in their neighbour tables.
      await ipBatch(d.exec, ns, [`link set ${up} address ${uplinkMac(node.ip)}`,
        `addr replace ${node.ip}/${prefixLen} dev ${up}`,
        ...(ip6 ? [`addr replace ${ip6}/${prefixLen6} dev ${up} nodad`] : []), `link set ${up} up`,
        ...(gw ? [`route replace default via ${gw} dev ${up}`] : []),
        ...(ip6 && gw6 ? [`route replace default via ${gw6} dev ${up}`] : [])]);
      await setSysctl(d.exec, ns, 'net.ipv4.ip_forward', '1');
      if (ip6) await setSysctl(d.exec, ns, 'net.ipv6.conf.all.forwarding', '1');
      // Pod → ClusterIP → pod on the same bridge needs bridged replies to see conntrack (un-DNAT).
      // Best effort: without br_netfilter the key is missing and only that case breaks.
      await setSysctl(d.exec, ns, 'net.bridge.bridge-nf-call-iptables', '1').catch(() => undefined);
      if (ip6) {
        await setSysctl(d.exec, ns, 'net.bridge.bridge-nf-call-ip6tables', '1')
          .catch(() => undefined);
      }
      if (v4CIDRs.length) await ensureMasquerade(d.exec, ns, v4CIDRs, false);
      if (ip6) await ensureMasquerade(d.exec, ns, v6CIDRs, true);
    },
    async setUplink(node, up) {
      await ipBatch(d.exec, hostOf(node).netns, [`link set ${linkName(node)} ${up ? 'up' : 'down'}`]);
    },
    async syncRoutes(node, peers) {
      const ns = nodeNetns(node);
      const want = new Map<string, string>();
      for (const p of peers) {
        for (const c of p.podCIDRs) {
          const via = p.ips.find((ip) => ip.includes(':') === c.includes(':'));
          if (via) want.set(c, via);
        }
      }
      const have = new Map([...await gatewayRoutes(d.exec, ns, '-4', spec.node.uplink),
        ...(v6 ? await gatewayRoutes(d.exec, ns, '-6', spec.node.uplink) : [])]);
      const lines: string[] = [];
      for (const [dst, via] of have) if (!want.has(dst)) lines.push(`route del ${dst} via ${via}`);
      for (const [dst, via] of want) {
        if (have.get(dst) !== via) lines.push(`route replace ${dst} via ${via} dev ${spec.node.uplink}`);
      }
      await ipBatch(d.exec, ns, lines);
    },
  };
}

/** Routes of a family with a gateway on `dev`: kdp's host-gw routes (pods' own subnet route has
 *  none; the VXLAN backend's are on its VTEP). */
async function gatewayRoutes(
  exec: HostExec, ns: string, family: '-4' | '-6', dev: string,
): Promise<Map<string, string>> {
  const { stdout } = await exec.run('ip', ['-n', ns, family, '-j', 'route', 'show', 'dev', dev]);
  const out = new Map<string, string>();
  for (const r of JSON.parse(stdout || '[]') as Array<{ dst: string; gateway?: string }>) {
    if (r.gateway && r.dst !== 'default') out.set(r.dst, r.gateway);
  }
  return out;
}

export const MASQ_CHAIN = 'KDP-MASQ';

/**
 * cni.md §8.5 (4), per family: POSTROUTING (non-LOCAL destinations) → KDP-MASQ: RETURN for each
 * cluster CIDR of the family, then MASQUERADE. The chain is rewritten atomically; the jump is
 * added once.
 */
async function ensureMasquerade(
  exec: HostExec, ns: string, clusterCIDRs: readonly string[], v6: boolean,
): Promise<void> {
  const jump = `-A POSTROUTING -m addrtype ! --dst-type LOCAL -m comment --comment "kdp: masquerade traffic leaving the cluster" -j ${MASQ_CHAIN}`;
  const tool = v6 ? 'ip6tables' : 'iptables';
  const { stdout } = await exec.run(`${tool}-save`, ['-t', 'nat'], { netns: ns });
  const lines = ['*nat', `:${MASQ_CHAIN} - [0:0]`,
    ...clusterCIDRs.map((c) =>
      `-A ${MASQ_CHAIN} -d ${c} -m comment --comment "kdp: pod to pod is not NATed" -j RETURN`),
    `-A ${MASQ_CHAIN} -j MASQUERADE`];
  if (!stdout.split('\n').some((l) => l.startsWith('-A POSTROUTING') && l.includes(`-j ${MASQ_CHAIN}`))) {
    lines.push(jump);
  }
  lines.push('COMMIT');
  await exec.run(`${tool}-restore`, ['-w', '5', '--noflush'],
    { netns: ns, input: `${lines.join('\n')}\n` });
}
