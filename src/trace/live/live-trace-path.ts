// Where to look for a probe: the interfaces each simulated branch crosses, named as the netns
// data plane names them (pod namespaces and host veths after the pod UID, node namespaces
// `<prefix>-<node>`, the underlay's bridge ports after the node).

import { hostVethName } from '../../cni/bridge.js';
import { kdpError } from '../../errors.js';
import { linkName } from '../../host/names.js';
import { podNetnsName } from '../../kubelet/runtime-netns.js';
import type { ResolvedSource } from '../cluster.js';
import type { TraceDestination } from '../result.js';
import type { CapturePoint } from './capture.js';
import type { LiveCluster } from './live-trace.js';

export const nodeNetns = (c: LiveCluster, node: string): string => `${c.prefix}-${node}`;

function podUid(c: LiveCluster, pod: string): string {
  const uid = c.podUids.get(pod);
  if (!uid) throw kdpError('KDP_TRACE', `--live: pod ${pod} has no UID (is it running?)`);
  return uid;
}

/** The namespace the probe leaves from: the pod's own, or the node's. */
export function senderNetns(c: LiveCluster, src: ResolvedSource): string {
  if (src.entry.kind === 'pod') return podNetnsName(c.prefix, podUid(c, src.entry.pod));
  return nodeNetns(c, src.entry.node);
}

/** A pod's eth0, its host veth and the node's bridge, from the pod outwards. */
function podSide(c: LiveCluster, pod: string, node: string): CapturePoint[] {
  const uid = podUid(c, pod);
  const ip = c.topo.pods.find((p) => p.name === pod)?.ip;
  const veth = hostVethName(uid, 'eth0');
  const ns = nodeNetns(c, node);
  return [
    {
      netns: podNetnsName(c.prefix, uid), iface: 'eth0', label: `pod ${pod} eth0`,
      ...(ip ? { localIP: ip } : {}),
    },
    { netns: ns, iface: veth, label: `node ${node} ${veth}`, node },
    { netns: ns, iface: 'cni0', label: `node ${node} cni0`, node },
  ];
}

/** From one node to the next: out of its eth0, onto the underlay (the sender's bridge port:
 *  the frame is the same on the receiver's), into the next node's eth0. Over VXLAN the probe
 *  itself is seen on the two VTEPs (on eth0 and the underlay it is inside UDP 8472). */
function crossing(c: LiveCluster, from: string, to: string, vxlan: string | undefined): CapturePoint[] {
  if (vxlan) {
    return [
      { netns: nodeNetns(c, from), iface: vxlan, label: `node ${from} ${vxlan}`, node: from },
      { netns: nodeNetns(c, to), iface: vxlan, label: `node ${to} ${vxlan}`, node: to },
    ];
  }
  return [
    { netns: nodeNetns(c, from), iface: 'eth0', label: `node ${from} eth0`, node: from },
    { netns: `${c.prefix}-underlay`, iface: linkName(from), label: `underlay ${linkName(from)}` },
    { netns: nodeNetns(c, to), iface: 'eth0', label: `node ${to} eth0`, node: to },
  ];
}

/** The interfaces one simulated branch crosses, in order. */
export function pathPoints(
  c: LiveCluster, src: ResolvedSource, b: TraceDestination,
): CapturePoint[] {
  const nodeNames = new Set(c.topo.nodes.map((n) => n.name));
  const nodes: string[] = [src.entry.node];
  /** Per crossing (index of the node it enters), the VTEP when it went over VXLAN. */
  const tunnels: Array<string | undefined> = [undefined];
  let tunnel: string | undefined;
  for (const h of b.hops) {
    if (h.stage === 'vxlan' && h.where === nodes[nodes.length - 1]) tunnel = /^(\S+) → /.exec(h.text)?.[1];
    if (nodeNames.has(h.where) && nodes[nodes.length - 1] !== h.where) {
      nodes.push(h.where);
      tunnels.push(tunnel);
      tunnel = undefined;
    }
  }
  const out: CapturePoint[] = [];
  // A node sends from its own stack: its eth0 shows up only when the packet leaves the node.
  if (src.entry.kind === 'pod') out.push(...podSide(c, src.entry.pod, src.entry.node));
  for (let i = 1; i < nodes.length; i++) out.push(...crossing(c, nodes[i - 1]!, nodes[i]!, tunnels[i]));
  const last = nodes[nodes.length - 1]!;
  if (b.reached.startsWith('pod ')) {
    out.push(...podSide(c, b.reached.slice(4), last).reverse());
  } else if (b.reached === 'external') {
    out.push({ netns: nodeNetns(c, last), iface: 'eth0', label: `node ${last} eth0`, node: last });
  }
  return uniquePoints(out);
}

export function uniquePoints(points: readonly CapturePoint[]): CapturePoint[] {
  const seen = new Set<string>();
  return points.filter((p) => {
    const k = `${p.netns}/${p.iface}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Interfaces the probe must be seen on: all but bridges (a bridge device does not see frames
 *  switched between two of its ports, so pod → pod on one node never shows on cni0). */
export function requiredLabels(points: readonly CapturePoint[]): string[] {
  return points.filter((p) => p.iface !== 'cni0').map((p) => p.label);
}
