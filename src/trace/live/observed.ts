// What the kernel showed for one probe: the rules it matched per node (from its own tracing) and
// the packet at each captured interface. Built from the parsers' output; compared with the
// simulation in observed-compare.ts.

import { endpointString } from '../packet.js';
import type { Topology } from '../topology.js';
import type { CaptureResult } from './capture.js';
import type { ObservedOutcome } from './observed-compare.js';
import { describePacket, type DecodedPacket } from './pcap.js';
import type { ProbeOutcome } from './prober.js';

/** One line of the kernel's trace (nft monitor trace / xtables-monitor --trace), parsed. */
export interface KernelTraceEvent {
  /** The kernel's trace id: one per packet per pass through the hooks of a namespace. */
  readonly id: string;
  readonly kind: 'packet' | 'rule' | 'policy' | 'return' | 'verdict';
  /** As the simulation's hop stage names it: `nat` (iptables) or `ip kube-proxy` (nftables). */
  readonly table: string;
  readonly chain: string;
  /** The rule as the tool prints it (kind `rule`), or the packet's description (kind `packet`). */
  readonly text?: string;
  readonly handle?: number;
  /** Lower case: `continue`, `accept`, `drop`, `jump KUBE-SERVICES`, `goto endpoint-…`. */
  readonly verdict?: string;
}

/** A rule the kernel matched. */
export interface KernelRuleHit {
  /** `<table> <chain>`: the simulation's `Hop.stage` for the same rule. */
  readonly stage: string;
  readonly table: string;
  readonly chain: string;
  readonly text: string;
  readonly handle?: number;
  readonly verdict: string;
}

export interface KernelTrace {
  readonly node: string;
  readonly netns: string;
  readonly tool: 'nft monitor trace' | 'xtables-monitor --trace';
  /** The tool's raw output, kept beside the pcap files. */
  readonly file: string;
  /** Distinct packets (trace ids) the kernel traced. */
  readonly packets: number;
  /** Rules matched by the first packet traced (the one the simulation follows). */
  readonly rules: readonly KernelRuleHit[];
  readonly error?: string;
}

/**
 * The rules matched by the first traced packet, in order (tracing's own rule left out). The
 * kernel gives one packet a new trace id on its way (after routing) and reuses ids for later
 * packets, so an event belongs to the packet last described under its id, known by what the
 * description says of it (packetIdentity) where it says enough.
 */
export function firstPacketRules(
  events: readonly KernelTraceEvent[], isOwn: (e: KernelTraceEvent) => boolean,
): KernelRuleHit[] {
  const keyed = packetKeys(events);
  const first = keyed[0]?.key;
  const mine = keyed.filter(({ key }) => key === first).map(({ e }) => e);
  // One pass through the node: a FORWARD after POSTROUTING is the same frame again (a routed
  // copy of a frame br_netfilter already bridged), which the simulation does not follow. A
  // packet that comes back in through another interface (PREROUTING, a new `iif`: a NodePort
  // on another node DNATed it back here, masqueraded) is a new pass, which it does follow.
  const pass: KernelTraceEvent[] = [];
  let posted = false;
  let passIif: string | undefined;
  for (const e of mine) {
    if (e.kind === 'packet') {
      // Locally sent packets have no input interface: `local` for the pass they start.
      const iif = inputInterface(e.text ?? '') ?? 'local';
      if (passIif === undefined) passIif = iif;
      else if (posted && /prerouting/i.test(e.chain) && iif !== passIif) {
        posted = false;
        passIif = iif;
      }
      if (/forward/i.test(e.chain) && posted) break;
    }
    if (/postrouting/i.test(e.chain)) posted = true;
    pass.push(e);
  }
  return pass
    .filter((e) => e.kind === 'rule' && !isOwn(e))
    .map((e) => ({
      stage: `${e.table} ${e.chain}`, table: e.table, chain: e.chain, text: e.text ?? '',
      ...(e.handle === undefined ? {} : { handle: e.handle }), verdict: e.verdict ?? '',
    }));
}

/** `iif "eth0"` (nft) / `IN=eth0` (xtables-monitor) of a traced packet. */
function inputInterface(text: string): string | undefined {
  const m = /\biif "([^"]+)"|\bIN=(\S+)/.exec(text);
  return m ? (m[1] ?? m[2]) : undefined;
}

function packetKeys(events: readonly KernelTraceEvent[]): KeyedEvent[] {
  const current = new Map<string, string>();
  return events.map((e) => {
    if (e.kind === 'packet') current.set(e.id, packetIdentity(e.text ?? '') ?? `trace ${e.id}`);
    return { e, key: current.get(e.id) ?? `trace ${e.id}` };
  });
}

/**
 * What stays the same for one packet across hooks and NAT: the IPv4 ID; IPv6 has none, so its
 * flow label with the payload length and the TCP flags / ICMPv6 sequence (nft) or TCP sequence
 * number (xtables-monitor), which tells a flow's packets apart.
 */
function packetIdentity(text: string): string | undefined {
  const ipId = /(?:\bID=|\bip id )(\d+)/.exec(text)?.[1];
  if (ipId !== undefined && !/\bFLOWLBL=/.test(text)) return `ip id ${ipId}`;
  const label = /(?:\bFLOWLBL=|\bip6 flowlabel )(\d+)/.exec(text)?.[1];
  if (label === undefined) return undefined;
  const len = /(?:\bLEN=|\bip6 length )(\d+)/.exec(text)?.[1] ?? '';
  const more = /(?:\btcp flags == |\bicmpv6 sequence |\bSEQ=)(\S+)/.exec(text)?.[1] ?? '';
  return `flow ${label} len ${len} ${more}`;
}

interface KeyedEvent {
  readonly e: KernelTraceEvent;
  readonly key: string;
}

/** Packets traced (distinct packets as firstPacketRules tells them apart). */
export function countPackets(events: readonly KernelTraceEvent[]): number {
  return new Set(packetKeys(events).map((k) => k.key)).size;
}

/** The probe's own 5-tuple before NAT, to tell its packets from replies on the wire. */
export interface ProbeTuple {
  readonly protocol: 'tcp' | 'udp' | 'icmp';
  readonly src: string;
  readonly sport: number;
  readonly dst: string;
  readonly dport: number;
  /** `ip:port` of every place the probe may be served at (its destination and, after DNAT,
   *  the simulated endpoints): tells NATed packets apart when SNAT changed the source port. */
  readonly servers?: ReadonlySet<string>;
}

/** One interface on the observed path. */
export interface ObservedHop {
  readonly label: string;
  readonly netns: string;
  readonly iface: string;
  readonly node?: string;
  readonly file: string;
  /** The probe's first packet here (`10.244.0.2:40123 → 10.244.1.3:8080 tcp S`), or none seen. */
  readonly forward?: string;
  readonly forwardPacket?: DecodedPacket;
  /** A pod's eth0: the probe arriving for the pod (after any NAT). */
  readonly arrived?: DecodedPacket;
  /** The first answer here (reply or ICMP error). */
  readonly reply?: string;
  readonly packets: number;
  readonly error?: string;
}

/** Is `p` the probe going out (possibly NATed), as opposed to an answer? The capture filter
 *  already keeps only the probe's port (or its original destination) and ICMP. */
export function isForward(p: DecodedPacket, t: ProbeTuple): boolean {
  if (t.protocol === 'icmp') return isEcho(p, 8, 128);
  if (p.protocol !== t.protocol || isAnswer(p, t)) return false;
  return p.sport === t.sport || (t.servers?.has(endpointString(p.dst, p.dport)) ?? false);
}

/** An ICMP echo request (8 / 128) or reply (0 / 129). */
function isEcho(p: DecodedPacket, v4Type: number, v6Type: number): boolean {
  return (p.protocol === 'icmp' && p.icmpType === v4Type) ||
    (p.protocol === 'icmpv6' && p.icmpType === v6Type);
}

export function isAnswer(p: DecodedPacket, t: ProbeTuple): boolean {
  if (p.quoted) return p.quoted.sport === t.sport || t.protocol === 'icmp';
  if (t.protocol === 'icmp') return isEcho(p, 0, 129);
  if (p.protocol !== t.protocol) return false;
  return p.dport === t.sport || (t.servers?.has(endpointString(p.src, p.sport)) ?? false);
}

/** Per captured interface: the probe's first packet and first answer. */
export function observedHops(captures: readonly CaptureResult[], t: ProbeTuple): ObservedHop[] {
  return captures.map((c) => {
    const probe = (x: { packet: DecodedPacket }) =>
      !isAnswer(x.packet, t) && isForward(x.packet, t);
    const fwd = c.packets.find(probe);
    const ans = c.packets.find((x) => isAnswer(x.packet, t));
    const local = c.point.localIP;
    const arrived = local ? c.packets.find((x) => x.packet.dst === local && probe(x)) : undefined;
    return {
      label: c.point.label, netns: c.point.netns, iface: c.point.iface, file: c.file,
      packets: c.packets.length,
      ...(c.point.node ? { node: c.point.node } : {}),
      ...(fwd ? { forward: describePacket(fwd.packet), forwardPacket: fwd.packet } : {}),
      ...(ans ? { reply: describePacket(ans.packet) } : {}),
      ...(arrived ? { arrived: arrived.packet } : {}),
      ...(c.error ? { error: c.error } : {}),
    };
  });
}

/**
 * What the kernel did with the probe. Delivered where it arrives at a pod's own eth0 for the
 * pod's address (the sender's own eth0 too: a pod reaching itself through a Service), else where
 * the answer says it was served; refused by a node's own stack when it was sent to a node.
 */
export function observeOutcome(
  topo: Topology, hops: readonly ObservedHop[], kernel: readonly KernelTrace[], probe: ProbeOutcome,
  sentTo: string,
): ObservedOutcome {
  const atPod = hops.find((h) => h.label.startsWith('pod ') && h.arrived);
  let reached: string | undefined;
  let destination: string | undefined;
  let sourceSeen: string | undefined;
  if (atPod?.arrived) {
    const p = atPod.arrived;
    reached = atPod.label.replace(/^pod (.*) eth0$/, 'pod $1');
    const ported = p.protocol === 'tcp' || p.protocol === 'udp';
    destination = endpointString(p.dst, ported ? p.dport : undefined);
    sourceSeen = p.src;
  } else if (probe.outcome === 'reply' && probe.responder) {
    const pod = topo.pods.find((p) => p.name.endsWith(`/${probe.responder}`));
    if (pod) reached = `pod ${pod.name}`;
    if (probe.servedBy) destination = probe.servedBy;
  }
  // What the server itself saw wins over the capture: a frame br_netfilter bridged before
  // SNAT can show on the pod's eth0 too.
  const told = probe.seenSource?.replace(/^\[?([^\]]*?)\]?:\d+$/, '$1');
  sourceSeen = told ?? sourceSeen;
  if (!reached && probe.outcome === 'refused') {
    // Delivered to a node with nothing listening: the node's own stack answered with a reset.
    const to = hops[hops.length - 1]?.forwardPacket?.dst ?? sentTo;
    const node = topo.nodes.find((n) => n.nodeIPs.includes(to));
    if (node) reached = `node ${node.name}`;
  }
  // A pod's kernel refusing the probe (nothing listens) is a REJECT at that pod, as the tracer
  // says when it knows the pod's listeners; a node's is not modelled (delivered, ACCEPT).
  const verdict = probe.outcome === 'reply' ? 'ACCEPT'
    : probe.outcome === 'refused' && reached?.startsWith('pod ') ? 'REJECT'
      : reached ? 'ACCEPT' : probe.outcome === 'timeout' ? 'DROP' : 'REJECT';
  return {
    ...(reached ? { reached } : {}), ...(destination ? { destination } : {}),
    ...(sourceSeen ? { sourceSeen } : {}), verdict, hops, kernel,
  };
}
