// The hop-by-hop walk (DESIGN.md §6): source → node hooks in kernel order → routing → next node
// or bridge → destination. See README.md in this folder for the hook order.
//
// Per-node facts the walk needs on every hop (the `isLocal` test, the hook environments, which
// node owns a pod IP) are made once per topology and node (node-context.ts), not per packet:
// bulk tracing (verify, diff, benchmarks) runs the walk hundreds of thousands of times.

import { kdpError } from '../errors.js';
import { endpointString, type Packet } from './packet.js';
import { nodeContext, topologyIndex, type NodeContext, type TopologyIndex } from './node-context.js';
import { isLoopback, type TraceNodeInfo, type Topology } from './topology.js';
import { isRecording, newWorld, type World } from './world.js';
import { refusal } from './listeners.js';

/** Where the packet enters. */
export type TraceEntry =
  | { readonly kind: 'pod'; readonly pod: string; readonly node: string }
  | { readonly kind: 'node'; readonly node: string }
  | { readonly kind: 'external'; readonly node: string };

/** Where a world ended. */
export interface Arrival {
  readonly world: World;
  /** `pod ns/name`, `node n1`, `external`, or `dropped`. */
  readonly reached: string;
}

const MAX_NODE_PASSES = 6;

/** What one walk shares on every hop: the topology's index and where arrivals go. */
interface WalkRun {
  readonly ti: TopologyIndex;
  readonly out: Arrival[];
}

/** One pass through a node: the node, whether the packet was sent by one of its processes, the
 *  interface it came in on, and how many nodes it passed before. */
interface NodePass {
  readonly nc: NodeContext;
  readonly local: boolean;
  readonly inIface: string | undefined;
  readonly depth: number;
}

/** `recordHops: false` keeps only the outcome (bulk tracing). */
export function walk(topo: Topology, entry: TraceEntry, pkt: Packet, recordHops = true): Arrival[] {
  const node = findNode(topo, entry.node);
  const w = newWorld(pkt, recordHops);
  const out: Arrival[] = [];
  const run: WalkRun = { ti: topologyIndex(topo), out };
  if (entry.kind === 'pod' && isLoopback(pkt.dst)) {
    // A pod's loopback is its own namespace's `lo`: the packet never reaches the node.
    w.verdict = 'ACCEPT';
    if (isRecording(w)) w.hops.push({ where: entry.pod, stage: 'deliver', text: `${entry.pod} lo (its own loopback; the node's rules never see it)` });
    out.push({ world: w, reached: `pod ${entry.pod}` });
  } else if (entry.kind === 'pod') {
    if (isRecording(w)) w.hops.push({ where: entry.pod, stage: 'pod', text: `leaves ${entry.pod} eth0 (default route via ${node.gatewayIPs[0] ?? 'gateway'})` });
    if (isRecording(w)) w.hops.push({ where: node.name, stage: 'bridge', text: `veth → ${node.bridge} on ${node.name}` });
    nodePass(run, { nc: nodeContext(node), local: false, inIface: node.bridge, depth: 0 }, [w]);
  } else if (entry.kind === 'external') {
    if (isRecording(w)) w.hops.push({ where: node.name, stage: 'ingress', text: `arrives on ${node.name} ${node.underlayIface}` });
    nodePass(run, { nc: nodeContext(node), local: false, inIface: node.underlayIface, depth: 0 }, [w]);
  } else {
    if (isRecording(w)) w.hops.push({ where: node.name, stage: 'local', text: `sent by a process on ${node.name}` });
    nodePass(run, { nc: nodeContext(node), local: true, inIface: undefined, depth: 0 }, [w]);
  }
  return out;
}

function findNode(topo: Topology, name: string): TraceNodeInfo {
  for (const n of topo.nodes) if (n.name === name) return n;
  throw kdpError('KDP_TRACE', `unknown node ${name}`);
}

function dropped(w: World): boolean {
  return w.verdict !== undefined && w.verdict !== 'ACCEPT';
}

/** One pass through a node; arrivals are appended to `out` in the order the kernel would
 *  finish them (dropped at the first hook, delivered locally, then forwarded). */
function nodePass(run: WalkRun, pass: NodePass, worlds: World[]): void {
  const { nc, local, inIface, depth } = pass;
  const out = run.out;
  if (depth > MAX_NODE_PASSES) throw kdpError('KDP_TRACE', 'routing loop: the packet passed too many nodes');
  const f = nc.node.filter;
  const ws = local
    ? f.runHook('OUTPUT', worlds, nc.outputEnv)
    : f.runHook('PREROUTING', worlds, nc.preroutingEnv(inIface));
  const toHost: World[] = [];
  const onward: World[] = [];
  for (const w of ws) {
    if (dropped(w)) {
      out.push({ world: w, reached: 'dropped' });
      continue;
    }
    w.verdict = undefined;
    (nc.isLocal(w.pkt.dst) ? toHost : onward).push(w);
  }
  if (toHost.length > 0) {
    // Locally generated traffic to a local address goes out through POSTROUTING onto `lo`.
    const arriving = local ? f.runHook('POSTROUTING', toHost, nc.loopbackEnv) : toHost;
    const inEnv = nc.inputEnv(inIface, local);
    for (const w of arriving.length > 0 ? f.runHook('INPUT', arriving, inEnv) : arriving) {
      if (dropped(w)) out.push({ world: w, reached: 'dropped' });
      else if (!nc.isLocal(w.pkt.dst)) {
        // IPVS took it at LOCAL_IN and sent it on: out through POSTROUTING, not FORWARD.
        w.verdict = undefined;
        leaveNode(run, { ...pass, local: true }, w);
      } else {
        w.verdict = 'ACCEPT';
        if (isRecording(w)) w.hops.push({ where: nc.node.name, stage: 'deliver', text: `delivered to ${nc.node.name} (local address ${endpointString(w.pkt.dst, w.pkt.dport)})` });
        out.push({ world: w, reached: nc.deliveredReached });
      }
    }
  }
  for (const w of onward) leaveNode(run, pass, w);
}

function leaveNode(run: WalkRun, pass: NodePass, w: World): void {
  const { nc, local, inIface } = pass;
  const { ti, out } = run;
  const node = nc.node;
  const owner = ti.podOwner(w.pkt.dst);
  const onBridge = node.podCIDRs.length > 0 && owner === node;
  const v6 = w.pkt.dst.includes(':');
  const r = nc.route(onBridge, v6, inIface, !onBridge && !v6 && owner !== undefined && node.vxlan?.peers.has(owner.name));
  if (isRecording(w)) w.hops.push({ where: node.name, stage: 'route', text: `route ${w.pkt.dst} → dev ${r.iface}` });
  // A loopback source may leave `lo` only with route_localnet=1 (IPv4; ::1 never): the
  // kernel's output route refuses it (a martian source) when a rule DNATed 127.0.0.1:PORT away.
  if (local && isLoopback(w.pkt.src) && (w.pkt.src.includes(':') || !node.routeLocalnet)) {
    w.verdict = 'DROP';
    if (isRecording(w)) {
      w.hops.push({ where: node.name, stage: 'route', text: `dropped: source ${w.pkt.src} cannot leave lo for ` +
        `${r.iface} (${w.pkt.src.includes(':') ? 'IPv6 loopback' : 'net.ipv4.conf.all.route_localnet=0'})` });
    }
    out.push({ world: w, reached: 'dropped' });
    return;
  }
  let ws: readonly World[] = [w];
  if (!local) ws = nc.node.filter.runHook('FORWARD', ws, r.forwardEnv);
  for (const x of ws) {
    if (dropped(x)) {
      out.push({ world: x, reached: 'dropped' });
      continue;
    }
    for (const y of nc.node.filter.runHook('POSTROUTING', [x], r.postroutingEnv)) {
      if (dropped(y)) {
        out.push({ world: y, reached: 'dropped' });
        continue;
      }
      y.verdict = undefined;
      nextHop(run, pass, y, y.pkt.dst === w.pkt.dst ? owner : ti.podOwner(y.pkt.dst));
    }
  }
}

function nextHop(run: WalkRun, pass: NodePass, w: World, owner: TraceNodeInfo | undefined): void {
  const { ti, out } = run;
  const node = pass.nc.node;
  const dst = w.pkt.dst;
  if (owner === node) {
    const pod = ti.podWithIP(dst);
    w.verdict = 'ACCEPT';
    if (isRecording(w)) w.hops.push({ where: node.name, stage: 'deliver', text: `${node.bridge} → ${pod ? pod.name : dst} eth0` });
    const proto = w.pkt.proto;
    if (pod?.listeners && proto !== 'icmp') {
      const PROTO = proto.toUpperCase();
      if (!pod.listeners.has(`${w.pkt.dport}/${PROTO}`)) {
        w.verdict = 'REJECT';
        if (isRecording(w)) {
          w.hops.push({ where: pod.name, stage: 'deliver', text: `nothing in ${pod.name} listens on ` +
            `${PROTO} ${w.pkt.dport} (it listens on ${[...pod.listeners].join(', ') || 'no port'}): ${refusal(proto)}` });
        }
      } else if (isRecording(w)) {
        w.hops.push({ where: pod.name, stage: 'deliver', text: `${pod.name} listens on ${PROTO} ${w.pkt.dport}` });
      }
    }
    out.push({ world: w, reached: pod ? pod.reached : `pod-ip ${dst}` });
    return;
  }
  const next = owner ?? ti.nodeWithIP(dst);
  if (next && next !== node) {
    // The packet mark is per namespace: a veth crossing into another namespace scrubs it
    // (skb_scrub_packet), so kube-proxy's 0x4000 never reaches the next node.
    w.mark = 0;
    const vx = owner === next ? node.vxlan : undefined;
    const tunnel = vx?.peers.get(next.name);
    if (vx && tunnel) {
      // flannel's VXLAN: the route via the peer's VTEP encapsulates; the peer's VTEP decapsulates
      // and the inner packet (addresses unchanged) enters its stack from there.
      if (isRecording(w)) {
        w.hops.push({ where: node.name, stage: 'vxlan', text: `${vx.iface} → ${next.name}: encapsulated in ` +
          `UDP ${tunnel.src} → ${tunnel.dst}:${vx.port} VNI ${vx.vni}, out of ${node.underlayIface} (vxlan route)` });
        w.hops.push({ where: next.name, stage: 'vxlan', text: `decapsulated on ${vx.iface} of ${next.name} ` +
          `(VNI ${vx.vni}): inner ${endpointString(w.pkt.src, w.pkt.sport)} → ${endpointString(w.pkt.dst, w.pkt.dport)}` });
      }
      nodePass(run, { nc: nodeContext(next), local: false, inIface: vx.iface, depth: pass.depth + 1 }, [w]);
      return;
    }
    if (isRecording(w)) w.hops.push({ where: node.name, stage: 'underlay', text: `${node.underlayIface} → ${next.name} (host-gw route)` });
    nodePass(run, { nc: nodeContext(next), local: false, inIface: next.underlayIface, depth: pass.depth + 1 }, [w]);
    return;
  }
  w.verdict = 'ACCEPT';
  if (isRecording(w)) w.hops.push({ where: node.name, stage: 'egress', text: `leaves ${node.name} via ${node.underlayIface} towards ${dst}` });
  const host = ti.hostAt(dst);
  if (host && w.pkt.proto !== 'icmp') {
    const PROTO = w.pkt.proto.toUpperCase();
    const who = host.ports.get(`${w.pkt.dport}/${PROTO}`);
    if (who) {
      if (isRecording(w)) w.hops.push({ where: 'host', stage: 'deliver', text: `${endpointString(dst, w.pkt.dport)} is ${who}` });
    } else {
      w.verdict = 'REJECT';
      if (isRecording(w)) {
        w.hops.push({ where: 'host', stage: 'deliver', text: `nothing on the host listens on ${PROTO} ${w.pkt.dport} at ${dst} ` +
          `(it listens on ${[...host.ports].map(([k, v]) => `${k}: ${v}`).join(', ') || 'no port'}): ${refusal(w.pkt.proto)}` });
      }
    }
  }
  out.push({ world: w, reached: 'external' });
}
