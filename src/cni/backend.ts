// The pod network's backends between nodes (`kdp up --backend host-gw|vxlan|auto`), flannel's
// model, and the one rule for which path a packet from one node to another node's pods takes —
// used by the node agents that program it (addons/kdp-cni.ts), the lab cloud's route controller
// (which owns the host-gw routes) and the tracer, so all three agree.
// - host-gw: a route per remote podCIDR via the peer's InternalIP (needs a shared L2 segment).
// - vxlan: over the node's VTEP (host/vxlan.ts) to the peer's VTEP, whatever lies between.
// - auto: host-gw when the peer's InternalIP is in this node's underlay subnet, else vxlan
//   (flannel's vxlan backend with DirectRouting).
// Each node agent publishes what its peers need on its Node, with flannel's annotations
// (backend-type, backend-data {"VNI","VtepMAC"}, public-ip) plus kdp's backend choice and underlay
// subnet, so every agent programs its peers from the API alone (hub and spoke).

import { cidrContains, isCIDR, isIPv4 } from '../api/net.js';
import type { Node } from '../api/types.js';
import { kdpError } from '../errors.js';

export type Backend = 'host-gw' | 'vxlan' | 'auto';
export const BACKENDS: readonly Backend[] = ['host-gw', 'vxlan', 'auto'];

export const BACKEND_TYPE_ANNOTATION = 'flannel.alpha.coreos.com/backend-type';
export const BACKEND_DATA_ANNOTATION = 'flannel.alpha.coreos.com/backend-data';
export const PUBLIC_IP_ANNOTATION = 'flannel.alpha.coreos.com/public-ip';
export const KDP_BACKEND_ANNOTATION = 'kdp.dev/pod-network-backend';
export const KDP_UNDERLAY_ANNOTATION = 'kdp.dev/underlay-cidr';

export function parseBackend(value: string | undefined, field = '--backend'): Backend {
  const v = value ?? 'host-gw';
  if (!BACKENDS.includes(v as Backend)) {
    throw kdpError('KDP_CONFIG', `${field}: "${value}" is not one of ${BACKENDS.join(', ')}`);
  }
  return v as Backend;
}

/** Whether pods need the VXLAN MTU (flannel lowers it whenever the vxlan backend runs). */
export function usesVxlan(b: Backend): boolean {
  return b !== 'host-gw';
}

/** What the pod network knows of a node, from its Node object. */
export interface NetNode {
  readonly name: string;
  /** InternalIPs, in the Node's order. */
  readonly ips: readonly string[];
  readonly podCIDRs: readonly string[];
  /** The node's backend; undefined: not published yet (an agent not started) → host-gw. */
  readonly backend?: Backend;
  /** The node's underlay subnet (auto's same-segment test). */
  readonly underlayCIDR?: string;
  /** The VTEP MAC (vxlan and auto nodes). */
  readonly vtepMac?: string;
}

export function netNodeOf(n: Node): NetNode {
  const a = n.metadata.annotations ?? {};
  let vtepMac: string | undefined;
  try {
    const data = JSON.parse(a[BACKEND_DATA_ANNOTATION] ?? 'null') as { VtepMAC?: unknown } | null;
    if (typeof data?.VtepMAC === 'string' && /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(data.VtepMAC)) vtepMac = data.VtepMAC;
  } catch { /* not JSON: no VTEP */ }
  const backend = BACKENDS.includes(a[KDP_BACKEND_ANNOTATION] as Backend) ? a[KDP_BACKEND_ANNOTATION] as Backend : undefined;
  const underlay = a[KDP_UNDERLAY_ANNOTATION];
  return {
    name: n.metadata.name!,
    ips: (n.status?.addresses ?? []).filter((x) => x.type === 'InternalIP').map((x) => x.address),
    podCIDRs: n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : []),
    ...(backend ? { backend } : {}),
    ...(underlay && isCIDR(underlay) ? { underlayCIDR: underlay } : {}),
    ...(vtepMac ? { vtepMac } : {}),
  };
}

/** The annotations a node's agent publishes (merge-patched onto its Node). */
export function backendAnnotations(o: {
  backend: Backend; nodeIP: string; underlayCIDR: string; vtepMac?: string;
}): Record<string, string> {
  const vx = usesVxlan(o.backend) && o.vtepMac;
  return {
    [BACKEND_TYPE_ANNOTATION]: vx ? 'vxlan' : 'host-gw',
    [BACKEND_DATA_ANNOTATION]: vx ? JSON.stringify({ VNI: 1, VtepMAC: o.vtepMac }) : 'null',
    [PUBLIC_IP_ANNOTATION]: o.nodeIP,
    [KDP_BACKEND_ANNOTATION]: o.backend,
    [KDP_UNDERLAY_ANNOTATION]: o.underlayCIDR,
  };
}

const v4 = (xs: readonly string[]) => xs.find((x) => !x.includes(':'));

/**
 * How `from` reaches `to`'s pods: `host-gw`, `vxlan`, or undefined when it cannot yet (a vxlan
 * peer that has not published its VTEP, a peer without an InternalIP or podCIDR). VXLAN carries
 * IPv4 only (as flannel's v4 VTEP); IPv6 podCIDRs always go host-gw.
 */
export function pathBetween(from: NetNode, to: NetNode): 'host-gw' | 'vxlan' | undefined {
  const toIP = v4(to.ips);
  if (!to.podCIDRs.length || !to.ips.length) return undefined;
  const backend = from.backend ?? 'host-gw';
  const sameSegment = backend === 'auto' && from.underlayCIDR && toIP && isIPv4(toIP)
    ? cidrContains(from.underlayCIDR, toIP) : false;
  if (backend === 'host-gw' || sameSegment) return 'host-gw';
  if (!toIP || !v4(to.podCIDRs) || !to.vtepMac) return undefined;
  return 'vxlan';
}

export interface HostGwPeer { readonly name: string; readonly ips: string[]; readonly podCIDRs: string[] }
export interface OverlayPeer {
  readonly name: string; readonly podCIDR: string; readonly vtepIP: string; readonly mac: string;
  readonly underlayIP: string;
}

/** `self`'s peers split by path, in name order (IPv6 podCIDRs of vxlan peers go host-gw). */
export function planPeers(self: NetNode, nodes: readonly NetNode[]): { hostGw: HostGwPeer[]; vxlan: OverlayPeer[] } {
  const hostGw: HostGwPeer[] = [];
  const vxlan: OverlayPeer[] = [];
  for (const p of [...nodes].sort((a, b) => a.name.localeCompare(b.name))) {
    if (p.name === self.name) continue;
    const path = pathBetween(self, p);
    if (path === 'host-gw') hostGw.push({ name: p.name, ips: [...p.ips], podCIDRs: [...p.podCIDRs] });
    if (path !== 'vxlan') continue;
    const cidr = v4(p.podCIDRs)!;
    vxlan.push({ name: p.name, podCIDR: cidr, vtepIP: cidr.split('/')[0]!, mac: p.vtepMac!, underlayIP: v4(p.ips)! });
    const six = p.podCIDRs.filter((c) => c.includes(':'));
    if (six.length) hostGw.push({ name: p.name, ips: [...p.ips], podCIDRs: six });
  }
  return { hostGw, vxlan };
}
