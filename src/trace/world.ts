// One possible history of a packet. Load-balancing rules fork a world into several, each with
// its probability; the tracer follows all of them.

import type { Packet } from './packet.js';

export type Verdict = 'ACCEPT' | 'DROP' | 'REJECT';

/** The verdict as users read it: `DROP (policy ns/name)` when NetworkPolicy dropped it. */
export function verdictLabel(verdict: Verdict, dropBy?: string): string {
  return verdict === 'DROP' && dropBy ? `DROP (${dropBy})` : verdict;
}

/** Where a rule came from, for the user. */
export interface HopOrigin {
  readonly servicePort?: string;
  readonly endpoint?: string;
}

export interface Hop {
  /** Node (or namespace) where this happened. */
  readonly where: string;
  /** e.g. `nat PREROUTING`, `route`, `bridge`, `deliver`. */
  readonly stage: string;
  readonly chain?: string;
  /** 1-based index of the rule in its chain. */
  readonly rule?: number;
  /** The rule as written, or a description of the step. */
  readonly text: string;
  readonly origin?: HopOrigin;
  /** `dst 10.96.0.10:53 → 10.244.1.5:53`, `masquerade src 10.244.1.2 → 172.18.0.2`, ... */
  readonly nat?: string;
}

export interface World {
  pkt: Packet;
  mark: number;
  probability: number;
  /** Conntrack: a DNAT/SNAT was applied to this connection (ctstate DNAT / SNAT). */
  dnat: boolean;
  snat: boolean;
  masquerade: boolean;
  /** Set by the IPVS simulation when a virtual server scheduled this packet. */
  ipvs?: { vaddr: string; vport: number; vproto: string };
  /** Set when a terminal verdict was reached. */
  verdict?: Verdict;
  /** A DROP by NetworkPolicy: `policy ns/name` (a default-deny names every isolating policy,
   *  `policy ns/a, ns/b`). Shown as the verdict `DROP (policy ns/name)`. */
  dropBy?: string;
  readonly hops: Hop[];
}

/** A hop list that keeps nothing: for bulk tracing (verify, diff, benchmarks) where only the
 *  outcome matters and recording every hop would dominate the cost. */
class DiscardedHops extends Array<Hop> {
  override push(): number {
    return 0;
  }
}

/** One shared instance: it never holds anything (constructing an Array subclass is slow). */
const DISCARDED: Hop[] = new DiscardedHops();

/** False for worlds traced without hops: callers skip building hop records. (Every such world
 *  holds the one DISCARDED list: an identity test, cheaper than `instanceof`.) */
export function isRecording(w: World): boolean {
  return w.hops !== DISCARDED;
}

export function newWorld(pkt: Packet, recordHops = true): World {
  const hops = recordHops ? [] : DISCARDED;
  return {
    pkt, mark: 0, probability: 1, dnat: false, snat: false, masquerade: false, ipvs: undefined, verdict: undefined,
    dropBy: undefined, hops,
  };
}

export function forkWorld(w: World, probability: number): World {
  // Spelled out (not spread): every world then has one shape, which keeps the hot paths fast.
  return {
    pkt: w.pkt, mark: w.mark, probability, dnat: w.dnat, snat: w.snat, masquerade: w.masquerade, ipvs: w.ipvs,
    verdict: w.verdict, dropBy: w.dropBy, hops: w.hops === DISCARDED ? w.hops : [...w.hops],
  };
}
