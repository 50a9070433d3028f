// The hop-by-hop walk (DESIGN.md §6): source → node hooks in kernel order → routing → next node
// or bridge → destination. See README.md in this folder for the hook order.

import { kdpError } from '../errors.js';
import { endpointString, type Packet } from './packet.js';
import {
  isLocalTo, nodeOwningPodIP, nodeWithIP, type TraceNodeInfo, type Topology,
} from './topology.js';
import { isRecording, newWorld, type World } from './world.js';

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

/** `recordHops: false` keeps only the outcome (bulk tracing). */
export function walk(topo: Topology, entry: TraceEntry, pkt: Packet, recordHops = true): Arrival[] {
  const node = findNode(topo, entry.node);
  const w = newWorld(pkt, recordHops);
  if (entry.kind === 'pod') {
    if (isRecording(w)) w.hops.push({ where: entry.pod, stage: 'pod', text: `leaves ${entry.pod} eth0 (default route via ${node.gatewayIPs[0] ?? 'gateway'})` });
    if (isRecording(w)) w.hops.push({ where: node.name, stage: 'bridge', text: `veth → ${node.bridge} on ${node.name}` });
    return nodePass(topo, node, [w], 'forwarded', node.bridge, 0);
  }
  if (entry.kind === 'external') {
    if (isRecording(w)) w.hops.push({ where: node.name, stage: 'ingress', text: `arrives on ${node.name} ${node.underlayIface}` });
    return nodePass(topo, node, [w], 'forwarded', node.underlayIface, 0);
  }
  if (isRecording(w)) w.hops.push({ where: node.name, stage: 'local', text: `sent by a process on ${node.name}` });
  return nodePass(topo, node, [w], 'local', undefined, 0);
}

function findNode(topo: Topology, name: string): TraceNodeInfo {
  const n = topo.nodes.find((x) => x.name === name);
  if (!n) throw kdpError('KDP_TRACE', `unknown node ${name}`);
  return n;
}

function route(topo: Topology, node: TraceNodeInfo, dst: string): { iface: string; src: string } {
  const onBridge = node.podCIDRs.length > 0 && nodeOwningPodIP(topo, dst) === node;
  if (onBridge) return { iface: node.bridge, src: sameFamily(node.gatewayIPs, dst) };
  return { iface: node.underlayIface, src: sameFamily(node.nodeIPs, dst) };
}

/** The first address of `dst`'s family, else the first address, else ''. */
function sameFamily(ips: readonly string[], dst: string): string {
  const v6 = dst.includes(':');
  for (const ip of ips) if (ip.includes(':') === v6) return ip;
  return ips[0] ?? '';
}

function nodePass(
  topo: Topology, node: TraceNodeInfo, worlds: World[], how: 'local' | 'forwarded', inIface: string | undefined,
  depth: number,
): Arrival[] {
  if (depth > MAX_NODE_PASSES) throw kdpError('KDP_TRACE', 'routing loop: the packet passed too many nodes');
  const isLocal = (ip: string) => isLocalTo(node, ip);
  const f = node.filter;
  const out: Arrival[] = [];
  const ws = how === 'local'
    ? f.runHook('OUTPUT', worlds, { where: node.name, isLocal, outIface: undefined })
    : f.runHook('PREROUTING', worlds, { where: node.name, isLocal, inIface, bridged: inIface === node.bridge });
  const toHost: World[] = [];
  const onward: World[] = [];
  for (const w of ws) {
    if (w.verdict && w.verdict !== 'ACCEPT') {
      out.push({ world: w, reached: 'dropped' });
      continue;
    }
    w.verdict = undefined;
    (isLocal(w.pkt.dst) ? toHost : onward).push(w);
  }
  // Locally generated traffic to a local address goes out through POSTROUTING onto `lo`.
  const arriving = how === 'local'
    ? f.runHook('POSTROUTING', toHost, { where: node.name, isLocal, outIface: 'lo' })
    : toHost;
  const inEnv = { where: node.name, isLocal, inIface: how === 'local' ? 'lo' : inIface, bridged: inIface === node.bridge };
  for (const w of f.runHook('INPUT', arriving, inEnv)) {
    if (w.verdict && w.verdict !== 'ACCEPT') out.push({ world: w, reached: 'dropped' });
    else if (!isLocal(w.pkt.dst)) {
      // IPVS took it at LOCAL_IN and sent it on: out through POSTROUTING, not FORWARD.
      w.verdict = undefined;
      out.push(...leaveNode(topo, node, isLocal, w, 'local', inIface, depth));
    } else {
      w.verdict = 'ACCEPT';
      if (isRecording(w)) w.hops.push({ where: node.name, stage: 'deliver', text: `delivered to ${node.name} (local address ${endpointString(w.pkt.dst, w.pkt.dport)})` });
      out.push({ world: w, reached: `node ${node.name}` });
    }
  }
  for (const w of onward) out.push(...leaveNode(topo, node, isLocal, w, how, inIface, depth));
  return out;
}

function leaveNode(
  topo: Topology, node: TraceNodeInfo, isLocal: (ip: string) => boolean, w: World, how: 'local' | 'forwarded',
  inIface: string | undefined, depth: number,
): Arrival[] {
  const r = route(topo, node, w.pkt.dst);
  if (isRecording(w)) w.hops.push({ where: node.name, stage: 'route', text: `route ${w.pkt.dst} → dev ${r.iface}` });
  let ws = [w];
  if (how === 'forwarded') {
    ws = node.filter.runHook('FORWARD', ws, { where: node.name, isLocal, inIface, outIface: r.iface, bridged: inIface === node.bridge });
  }
  const postEnv = { where: node.name, isLocal, inIface, outIface: r.iface, masqueradeAddress: r.src };
  const posted: World[] = [];
  for (const x of ws) {
    if (x.verdict && x.verdict !== 'ACCEPT') posted.push(x);
    else posted.push(...node.filter.runHook('POSTROUTING', [x], postEnv));
  }
  ws = posted;
  const out: Arrival[] = [];
  for (const x of ws) {
    if (x.verdict && x.verdict !== 'ACCEPT') {
      out.push({ world: x, reached: 'dropped' });
      continue;
    }
    x.verdict = undefined;
    out.push(...nextHop(topo, node, x, depth));
  }
  return out;
}

function nextHop(topo: Topology, node: TraceNodeInfo, w: World, depth: number): Arrival[] {
  const dst = w.pkt.dst;
  const owner = nodeOwningPodIP(topo, dst);
  if (owner === node) {
    const pod = topo.pods.find((p) => p.ip === dst);
    w.verdict = 'ACCEPT';
    if (isRecording(w)) w.hops.push({ where: node.name, stage: 'deliver', text: `${node.bridge} → ${pod ? pod.name : dst} eth0` });
    return [{ world: w, reached: pod ? `pod ${pod.name}` : `pod-ip ${dst}` }];
  }
  const next = owner ?? nodeWithIP(topo, dst);
  if (next && next !== node) {
    if (isRecording(w)) w.hops.push({ where: node.name, stage: 'underlay', text: `${node.underlayIface} → ${next.name} (host-gw route)` });
    return nodePass(topo, next, [w], 'forwarded', next.underlayIface, depth + 1);
  }
  w.verdict = 'ACCEPT';
  if (isRecording(w)) w.hops.push({ where: node.name, stage: 'egress', text: `leaves ${node.name} via ${node.underlayIface} towards ${dst}` });
  return [{ world: w, reached: 'external' }];
}
