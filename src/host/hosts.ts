// Simulated hosts ("host namespaces") for multi-host labs and tests (issue 19): each host is an
// underlay namespace with its own bridge, which its node namespaces attach to, and an uplink.
// Host 1 is the netns lab's usual underlay (`kdp-<id>-underlay`, 172.18.0.0/16); host k is
// `kdp-<id>-underlay-h<k>`. Two ways to join them:
// - `routed`: host k has its own subnet (the underlay CIDR shifted by k-1 blocks: 172.19.0.0/16,
//   172.20.0.0/16, …, gateway at the same offset) and an uplink (`kdp-wan`, a /30 of 10.255.0.0/24)
//   to one router namespace (`kdp-<id>-router`) that routes between the subnets. Nodes on
//   different hosts share no L2 segment: host-gw routes cannot work between them, VXLAN must.
// - `l2`: host k's bridge is a port (`kdp-wan`) of host 1's bridge: one segment, one subnet,
//   host-gw works between every pair of nodes.
// Everything is inside namespaces with the cluster prefix, recorded in the host state file before
// it is made; the real host's interfaces are never touched.

import { addToIP, cidrSize, parseCIDR, addressIndex } from '../api/net.js';
import { kdpError } from '../errors.js';
import type { HostExec } from './exec.js';
import { linkName } from './names.js';
import { ensureNetns, ipBatch, linkExists, listNetns, setSysctl } from './netns.js';
import type { HostStateFile } from './state.js';
import type { TopologySpec } from './topology.js';

export type HostLink = 'routed' | 'l2';
export const HOST_LINKS: readonly HostLink[] = ['routed', 'l2'];

export interface HostLayout {
  /** Number of simulated hosts (1: the usual single underlay). */
  readonly count: number;
  readonly link: HostLink;
}

export const SINGLE_HOST: HostLayout = { count: 1, link: 'l2' };
/** At most this many hosts (the transit /30s of the router fit in 10.255.0.0/24). */
export const MAX_HOSTS = 16;

/** Validated `--hosts` / `--host-link` (errors name the flag). */
export function parseHostLayout(count: number | undefined, link: string | undefined): HostLayout {
  const n = count ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > MAX_HOSTS) {
    throw kdpError('KDP_CONFIG', `--hosts: ${count} is not between 1 and ${MAX_HOSTS}`);
  }
  const l = link ?? 'routed';
  if (!HOST_LINKS.includes(l as HostLink)) {
    throw kdpError('KDP_CONFIG', `--host-link: "${link}" is not one of ${HOST_LINKS.join(', ')}`);
  }
  return { count: n, link: l as HostLink };
}

export interface HostUnderlay {
  /** 0-based. */
  readonly index: number;
  /** `h1`, `h2`, … */
  readonly name: string;
  readonly netns: string;
  readonly bridge: string;
  /** The subnet of the host's nodes (IPv4). */
  readonly cidr: string;
  /** The bridge's address in the host namespace: its nodes' default route. */
  readonly gateway: string;
}

/** Which host node index i (0-based) of a cluster runs on: round robin. */
export function hostOfNode(layout: HostLayout, i: number): number {
  return i % layout.count;
}

/** Host k's underlay (namespace, subnet, gateway) under `prefix`. */
export function hostUnderlay(spec: TopologySpec, prefix: string, layout: HostLayout, k: number): HostUnderlay {
  const base = `${prefix}-${spec.underlay.namespace}`;
  const netns = k === 0 ? base : `${base}-h${k + 1}`;
  const under = parseCIDR(spec.underlay.cidr)!;
  const gwOffset = spec.underlay.gateway ? addressIndex(under, spec.underlay.gateway) : 1n;
  const shift = layout.link === 'routed' ? BigInt(k) * cidrSize(under) : 0n;
  const network = addToIP(spec.underlay.cidr.split('/')[0]!, shift);
  return {
    index: k, name: `h${k + 1}`, netns, bridge: spec.underlay.bridge,
    cidr: `${network}/${under.prefix}`, gateway: addToIP(network, gwOffset),
  };
}

/** The IPv4 address of node index i (0-based): host-local numbering on routed hosts (the
 *  host's subnet, firstNodeHost + the node's place on its host), one numbering on l2 hosts. */
export function nodeIPOnHosts(spec: TopologySpec, layout: HostLayout, i: number): string {
  const k = hostOfNode(layout, i);
  const u = hostUnderlay(spec, '', layout, k);
  const place = layout.link === 'routed' ? Math.floor(i / layout.count) : i;
  return addToIP(u.cidr.split('/')[0]!, spec.underlay.firstNodeHost + place);
}

/** Router side and host side of host k's transit /30 (10.255.0.4k+1 and +2). */
function transit(k: number): { router: string; host: string } {
  return { router: `10.255.0.${4 * k + 1}`, host: `10.255.0.${4 * k + 2}` };
}

export const UPLINK = linkName('wan');

export interface Hosts {
  readonly layout: HostLayout;
  /** The router namespace (routed layouts of more than one host). */
  readonly routerNetns?: string;
  underlay(k: number): HostUnderlay;
  /** Makes every host beyond the first and joins them (host 1's underlay must exist). */
  ensure(): Promise<void>;
}

export function buildHosts(d: {
  exec: HostExec; state: HostStateFile; spec: TopologySpec; prefix: string; layout: HostLayout;
}): Hosts {
  const { exec, spec, prefix, layout } = d;
  const routed = layout.link === 'routed' && layout.count > 1;
  const routerNetns = routed ? `${prefix}-router` : undefined;
  const underlay = (k: number) => hostUnderlay(spec, prefix, layout, k);
  const make = async (ns: string) => {
    await d.state.addNetns(ns);
    await ensureNetns(exec, ns);
  };
  return {
    layout, routerNetns, underlay,
    async ensure() {
      if (layout.count === 1) return;
      const first = underlay(0);
      if (routerNetns) {
        await make(routerNetns);
        await setSysctl(exec, routerNetns, 'net.ipv4.ip_forward', '1');
      }
      for (let k = 0; k < layout.count; k++) {
        const h = underlay(k);
        if (k > 0) {
          await make(h.netns);
          if (!(await linkExists(exec, h.netns, h.bridge))) await ipBatch(exec, h.netns, [`link add ${h.bridge} type bridge`]);
          await ipBatch(exec, h.netns, [`link set ${h.bridge} up`]);
        }
        const port = linkName('h', String(k + 1));
        if (routerNetns) {
          // Host k's uplink to the router: its own /30; the host forwards for its nodes.
          const t = transit(k);
          if (!(await linkExists(exec, routerNetns, port))) {
            await ipBatch(exec, routerNetns, [`link add ${port} type veth peer name ${UPLINK} netns ${h.netns}`]);
          }
          await ipBatch(exec, routerNetns, [`addr replace ${t.router}/30 dev ${port}`, `link set ${port} up`,
            `route replace ${h.cidr} via ${t.host} dev ${port}`]);
          await ipBatch(exec, h.netns, [
            ...(k > 0 ? [`addr replace ${h.gateway}/${h.cidr.split('/')[1]} dev ${h.bridge}`] : []),
            `addr replace ${t.host}/30 dev ${UPLINK}`, `link set ${UPLINK} up`,
            `route replace default via ${t.router} dev ${UPLINK}`]);
          await setSysctl(exec, h.netns, 'net.ipv4.ip_forward', '1');
        } else if (k > 0) {
          // One L2 segment: host k's bridge is a port of host 1's.
          if (!(await linkExists(exec, first.netns, port))) {
            await ipBatch(exec, first.netns, [`link add ${port} type veth peer name ${UPLINK} netns ${h.netns}`]);
          }
          await ipBatch(exec, first.netns, [`link set ${port} master ${first.bridge} up`]);
          await ipBatch(exec, h.netns, [`link set ${UPLINK} master ${h.bridge} up`]);
        }
      }
    },
  };
}

/** The simulated host a process runs in (`kdp sh hK -- …`: `nsenter --net` into its namespace),
 *  as read from the kernel. */
export interface SimulatedHost {
  /** The lab's cluster id (its namespaces are `kdp-<id>-…`). */
  readonly clusterId: string;
  /** 0-based. */
  readonly index: number;
  /** Enough of the lab's layout to name and number the host (count: up to this host). */
  readonly layout: HostLayout;
  /** The host's namespace: the one this process is in. */
  readonly netns: string;
}

/**
 * Whether process `pid` runs inside a simulated host's namespace (`kdp-<id>-<underlay>` or
 * `…-h<k>`, `ip netns identify`), and which: routed when the lab has its router namespace, else
 * one L2 segment. Undefined in any other namespace — the real host's above all, whose
 * interfaces kdp never touches.
 */
export async function currentSimulatedHost(exec: HostExec, spec: TopologySpec, pid = process.pid):
  Promise<SimulatedHost | undefined> {
  const { stdout } = await exec.run('ip', ['netns', 'identify', String(pid)]).catch(() => ({ stdout: '' }));
  const netns = stdout.trim().split('\n')[0] ?? '';
  const m = new RegExp(`^kdp-([0-9a-f]{6})-${spec.underlay.namespace}(?:-h(\\d+))?$`).exec(netns);
  if (!m) return undefined;
  const index = m[2] ? Number(m[2]) - 1 : 0;
  if (!(index >= 0 && index < MAX_HOSTS)) return undefined;
  const routed = (await listNetns(exec)).includes(`kdp-${m[1]}-router`);
  return { clusterId: m[1]!, index, layout: { count: index + 1, link: routed ? 'routed' : 'l2' }, netns };
}
