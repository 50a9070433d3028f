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
  /** Set when NetworkPolicy dropped it: `policy ns/name[, ns/other]` (see verdictLabel). */
  readonly dropBy?: string;
  /** `pod ns/name`, `node n1`, `external`, `dropped`. */
  readonly reached: string;
  readonly hops: readonly Hop[];
}

export interface TraceResult {
  readonly packet: Packet;
  /** ACCEPT when every branch is delivered; else the verdict of the dropped branches. */
  readonly verdict: Verdict;
  /** The dropBy of the destination that gave `verdict` (NetworkPolicy drops only). */
  readonly dropBy?: string;
  readonly destinations: readonly TraceDestination[];
  readonly masquerade: boolean;
  /** Hops of the most likely branch. */
  readonly hops: readonly Hop[];
}

/** As `String.prototype.localeCompare` with no arguments (ECMA-402 defines that as this
 *  collator's compare), made once rather than per comparison. */
const collator = new Intl.Collator();

/**
 * The collator's order for `ip:port` strings of IPv4 addresses (digits, `.` and `:` only),
 * without calling into ICU for every comparison (equal shares make every tie of a fold a
 * collator call). Those characters each collate as one primary weight, so the order is
 * lexicographic by weight; the weights are read from the collator itself, and the shortcut is
 * used only if it agrees with the collator on a sample of such strings, so it can never order
 * differently from it.
 */
const fastCompare = buildFastCompare();

function buildFastCompare(): ((a: string, b: string) => number) | undefined {
  const chars = ':.0123456789';
  const ranked = [...chars].sort(collator.compare);
  const rank = new Int8Array(128).fill(-1);
  for (let i = 0; i < ranked.length; i++) {
    if (i > 0 && collator.compare(ranked[i - 1]!, ranked[i]!) >= 0) return undefined;
    rank[ranked[i]!.charCodeAt(0)] = i;
  }
  const cmp = (a: string, b: string): number => {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const ca = a.charCodeAt(i);
      const cb = b.charCodeAt(i);
      if (ca === cb) continue;
      const ra = ca < 128 ? rank[ca]! : -1;
      const rb = cb < 128 ? rank[cb]! : -1;
      if (ra < 0 || rb < 0) return NaN;
      return ra - rb;
    }
    for (let i = n; i < a.length; i++) if (a.charCodeAt(i) >= 128 || rank[a.charCodeAt(i)]! < 0) return NaN;
    for (let i = n; i < b.length; i++) if (b.charCodeAt(i) >= 128 || rank[b.charCodeAt(i)]! < 0) return NaN;
    return a.length - b.length;
  };
  const sample = ['10.1:8', '10.1.1:8', '1.2', '1.2:', '10.244.1.2:80', '10.244.1.10:80', '9.9.9.9:9',
    '10.96.0.1:443', '10.96.0.10:53', '10.96.0.1:53', '172.18.0.2:30080', '172.18.0.2', '0.0.0.0:0',
    '10.244.0.11:8080', '10.244.2.11:8080', '1:1', '1.1', '11', ':', '.'];
  for (const a of sample) {
    for (const b of sample) if (Math.sign(cmp(a, b)) !== Math.sign(collator.compare(a, b))) return undefined;
  }
  return cmp;
}

function compareDestinations(a: string, b: string): number {
  if (fastCompare) {
    const c = fastCompare(a, b);
    if (c === c) return c;
  }
  return collator.compare(a, b);
}

/** Up to this many arrivals, merging scans the destinations so far. */
const SCAN_MAX = 32;

export function foldArrivals(pkt: Packet, arrivals: readonly Arrival[]): TraceResult {
  const folded: TraceDestination[] = [];
  // A few arrivals (the usual case) merge by a scan; many by a keyed map. Same order either
  // way: first arrival of each destination, probabilities summed in arrival order.
  const byKey = arrivals.length > SCAN_MAX ? new Map<string, number>() : undefined;
  for (const a of arrivals) {
    const w = a.world;
    const verdict: Verdict = w.verdict ?? 'ACCEPT';
    const destination = endpointString(w.pkt.dst, pkt.proto === 'icmp' ? undefined : w.pkt.dport);
    // Masqueraded even when the new source equals the old one (a node reaching a Service).
    const masquerade = w.masquerade;
    const reached = a.reached;
    let at = -1;
    if (byKey) {
      const key = `${verdict}|${destination}|${masquerade}|${reached}|${w.dropBy ?? ''}`;
      at = byKey.get(key) ?? -1;
      if (at < 0) byKey.set(key, folded.length);
    } else {
      for (let i = 0; i < folded.length; i++) {
        const d = folded[i]!;
        if (d.destination === destination && d.verdict === verdict && d.masquerade === masquerade &&
          d.reached === reached && d.dropBy === w.dropBy) {
          at = i;
          break;
        }
      }
    }
    if (at >= 0) {
      const prev = folded[at]!;
      folded[at] = { ...prev, probability: prev.probability + w.probability };
    } else {
      folded.push({
        destination, probability: w.probability, masquerade, sourceSeen: w.pkt.src, verdict, reached,
        ...(w.dropBy ? { dropBy: w.dropBy } : {}), hops: w.hops,
      });
    }
  }
  const destinations = folded
    .sort((a, b) => b.probability - a.probability || compareDestinations(a.destination, b.destination));
  const refused = destinations.filter((d) => d.verdict !== 'ACCEPT');
  const decider = refused.length === 0 ? undefined : refused.length === destinations.length
    ? refused[0]! : refused.reduce((a, b) => (a.probability >= b.probability ? a : b));
  const verdict: Verdict = decider?.verdict ?? 'ACCEPT';
  return {
    packet: pkt,
    verdict,
    ...(decider?.dropBy ? { dropBy: decider.dropBy } : {}),
    destinations,
    masquerade: destinations.some((d) => d.masquerade && d.verdict === 'ACCEPT'),
    hops: destinations[0]?.hops ?? [],
  };
}
