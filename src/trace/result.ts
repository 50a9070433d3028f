// Folding the walk's worlds into the answer users read: every possible destination with its
// probability and NAT, one verdict, and the hops.

import { endpointString, type Packet } from './packet.js';
import type { Arrival } from './walk.js';
import type { Hop, Verdict } from './world.js';

export interface TraceDestination {
  /** `ip:port` after DNAT (the original destination when nothing DNATs). */
  readonly destination: string;
  readonly probability: number;
  /** The source was masqueraded (SNAT to the outgoing interface's address) on the way. */
  readonly masquerade: boolean;
  readonly sourceSeen: string;
  readonly verdict: Verdict;
  /** `pod ns/name`, `node n1`, `external`, `dropped`. */
  readonly reached: string;
  readonly hops: readonly Hop[];
}

export interface TraceResult {
  readonly packet: Packet;
  /** ACCEPT when every branch is delivered; else the verdict of the dropped branches. */
  readonly verdict: Verdict;
  readonly destinations: readonly TraceDestination[];
  readonly masquerade: boolean;
  /** Hops of the most likely branch. */
  readonly hops: readonly Hop[];
}

/** As `String.prototype.localeCompare` with no arguments (ECMA-402 defines that as this
 *  collator's compare), made once rather than per comparison. */
const collator = new Intl.Collator();

export function foldArrivals(pkt: Packet, arrivals: readonly Arrival[]): TraceResult {
  const byKey = new Map<string, TraceDestination>();
  for (const a of arrivals) {
    const w = a.world;
    const verdict: Verdict = w.verdict ?? 'ACCEPT';
    const destination = endpointString(w.pkt.dst, pkt.proto === 'icmp' ? undefined : w.pkt.dport);
    // Masqueraded even when the new source equals the old one (a node reaching a Service).
    const masquerade = w.masquerade;
    const key = `${verdict}|${destination}|${masquerade}|${a.reached}`;
    const prev = byKey.get(key);
    if (prev) {
      byKey.set(key, { ...prev, probability: prev.probability + w.probability });
    } else {
      byKey.set(key, {
        destination, probability: w.probability, masquerade, sourceSeen: w.pkt.src, verdict, reached: a.reached,
        hops: w.hops,
      });
    }
  }
  const destinations = [...byKey.values()]
    .sort((a, b) => b.probability - a.probability || collator.compare(a.destination, b.destination));
  const refused = destinations.filter((d) => d.verdict !== 'ACCEPT');
  const verdict: Verdict = refused.length === 0 ? 'ACCEPT' : refused.length === destinations.length
    ? refused[0]!.verdict : refused.reduce((a, b) => (a.probability >= b.probability ? a : b)).verdict;
  return {
    packet: pkt,
    verdict,
    destinations,
    masquerade: destinations.some((d) => d.masquerade && d.verdict === 'ACCEPT'),
    hops: destinations[0]?.hops ?? [],
  };
}
