// host-local's allocator for one range set: round-robin from the address after the last
// reserved one (so freed addresses are reused only when the walk wraps), skipping gateways;
// a requested IP is honoured if free. Error messages match host-local's.

import { parseIP } from '../../api/net.js';
import { kdpError } from '../../errors.js';
import { fmt, type Range } from './range.js';
import { rangeSetContains, rangeSetString, type RangeSet } from './range-set.js';
import type { IpamStore } from './store.js';

/** One allocated address, as the CNI result's `ips[]` entry (IPAM short form). */
export interface IPConfig {
  /** `ip/prefix` */
  readonly address: string;
  readonly gateway: string;
}

export interface Allocator {
  /** Reserves an IP for (id, ifname). Call with the store locked. */
  get(id: string, ifname: string, requestedIP?: string): IPConfig;
}

export function buildAllocator(set: RangeSet, store: IpamStore, rangeId: string): Allocator {
  const config = (r: Range, v: bigint): IPConfig => ({
    address: `${fmt(r, v)}/${r.subnet.prefix}`, gateway: fmt(r, r.gateway),
  });
  return {
    get(id, ifname, requestedIP) {
      if (requestedIP) return getRequested(set, store, rangeId, id, ifname, requestedIP, config);
      for (const ip of store.getByID(id, ifname)) {
        if (rangeSetContains(set, ip)) {
          throw kdpError('KDP_CONFLICT',
            `${ip} has been allocated to ${id}, duplicate allocation is not allowed`);
        }
      }
      const it = iterate(set, store.lastReservedIP(rangeId));
      for (let c = it.next(); c; c = it.next()) {
        if (store.reserve(id, ifname, fmt(c.range, c.value), rangeId)) {
          return config(c.range, c.value);
        }
      }
      throw kdpError('KDP_CONFLICT',
        `no IP addresses available in range set: ${rangeSetString(set)}`);
    },
  };
}

function getRequested(
  set: RangeSet, store: IpamStore, rangeId: string, id: string, ifname: string,
  requestedIP: string, config: (r: Range, v: bigint) => IPConfig,
): IPConfig {
  const r = rangeSetContains(set, requestedIP);
  const ip = parseIP(requestedIP);
  if (!r || !ip) {
    throw kdpError('KDP_CONFLICT',
      `requested IP address ${requestedIP} is not in range set ${rangeSetString(set)}`);
  }
  if (ip.value === r.gateway) {
    throw kdpError('KDP_CONFLICT', `requested ip ${requestedIP} is subnet's gateway`);
  }
  if (!store.reserve(id, ifname, fmt(r, ip.value), rangeId)) {
    throw kdpError('KDP_CONFLICT', `requested IP address ${requestedIP} is not available in ` +
      `range set ${rangeSetString(set)}`);
  }
  return config(r, ip.value);
}

/**
 * host-local's RangeIter: starts after `lastReserved` when it lies in the set (ending on it),
 * else at the first range's start; wraps across ranges; skips each range's gateway.
 */
export function iterate(set: RangeSet, lastReserved?: string) {
  let idx = 0;
  let cur: bigint | undefined;
  let startIdx = -1;
  let startVal = 0n;
  let hasStart = false;
  const lr = lastReserved ? parseIP(lastReserved) : null;
  if (lr && lastReserved) {
    const found = set.findIndex((r) => r.family === lr.family && lr.value >= r.start
      && lr.value <= r.end);
    if (found >= 0) { idx = found; cur = lr.value; }
  }
  const next = (): { range: Range; value: bigint } | undefined => {
    for (;;) {
      let r = set[idx]!;
      if (cur === undefined) {
        cur = r.start;
      } else if (cur === r.end) {
        idx = (idx + 1) % set.length;
        r = set[idx]!;
        cur = r.start;
      } else {
        cur += 1n;
      }
      if (!hasStart) { hasStart = true; startIdx = idx; startVal = cur; }
      else if (idx === startIdx && cur === startVal) return undefined;
      if (cur === r.gateway) continue;
      return { range: r, value: cur };
    }
  };
  return { next };
}
