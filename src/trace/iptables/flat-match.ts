// The common iptables matches as plain fields, tested inline: kube-proxy's tables are mostly
// `-p tcp -d IP --dport N`, `-s IP`, `-m mark --mark V/M` and `--ctstate`, and calling one
// closure per match (a different one at every call site) dominated bulk tracing.
//
// A rule's flat fields and its remaining tests form one conjunction of pure tests, so the
// interpreter may decide the fields first. Rules with a test that can throw (an unknown ipset)
// keep every test in order instead (see rule.ts).

import type { World } from '../world.js';

export const F_PROTO = 1;
export const F_SRC = 2;
export const F_DST = 4;
export const F_DPORT = 8;
export const F_MARK = 16;
export const F_CT = 32;

/** One shape for every rule: `has` says which fields apply (0: none). */
export interface FlatMatch {
  has: number;
  /** `-p`: the packet's protocol is `proto` or `protoAlt` (icmpv6 also names icmp). */
  proto: string;
  protoAlt: string;
  protoNeg: boolean;
  /** `-s IP` / `-d IP` without a prefix length: the canonical address. */
  src: string;
  srcNeg: boolean;
  dst: string;
  dstNeg: boolean;
  /** `--dport LO[:HI]` (never matches icmp). */
  dportLo: number;
  dportHi: number;
  dportNeg: boolean;
  /** `--mark V/M`: `value` is V & M. */
  markValue: number;
  markMask: number;
  markNeg: boolean;
  /** `--ctstate` without NEW: matches when DNAT / SNAT was applied and is listed. */
  ctDnat: boolean;
  ctSnat: boolean;
  ctNeg: boolean;
}

export function emptyFlatMatch(): FlatMatch {
  return {
    has: 0, proto: '', protoAlt: '', protoNeg: false, src: '', srcNeg: false, dst: '',
    dstNeg: false,
    dportLo: 0, dportHi: 0, dportNeg: false, markValue: 0, markMask: 0, markNeg: false,
    ctDnat: false, ctSnat: false, ctNeg: false,
  };
}

/** Sets the fields of one match kind unless that kind is already taken (a second `-p` stays a
 *  test); true when taken. */
export type FlatSetter = (f: FlatMatch) => boolean;

export function flatSetter(bit: number, set: (f: FlatMatch) => void): FlatSetter {
  return (f) => {
    if ((f.has & bit) !== 0) return false;
    f.has |= bit;
    set(f);
    return true;
  };
}

/** The conjunction of the fields `f.has` names. */
export function flatMatches(f: Readonly<FlatMatch>, x: World): boolean {
  const has = f.has;
  const p = x.pkt;
  if ((has & F_PROTO) !== 0 &&
    (p.proto === f.proto || p.proto === f.protoAlt) === f.protoNeg) return false;
  if ((has & F_DST) !== 0 && (p.dst === f.dst) === f.dstNeg) return false;
  if ((has & F_DPORT) !== 0 &&
    (p.proto !== 'icmp' && p.dport >= f.dportLo && p.dport <= f.dportHi) === f.dportNeg) return false;
  if ((has & F_SRC) !== 0 && (p.src === f.src) === f.srcNeg) return false;
  if ((has & F_MARK) !== 0 &&
    (((x.mark & f.markMask) >>> 0) === f.markValue) === f.markNeg) return false;
  if ((has & F_CT) !== 0 &&
    ((f.ctDnat && x.dnat) || (f.ctSnat && x.snat)) === f.ctNeg) return false;
  return true;
}
