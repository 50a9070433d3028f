// host-local IPAM over range sets and a store: ADD gives one IP per range set (rolling back the
// sets already taken when a later one fails); DEL releases every IP of (id, ifname).

import type { IpamStore } from './store.js';
import { buildAllocator, type IPConfig } from './allocator.js';
import {
  canonicalizeRangeSet, rangeSetContains, rangeSetsOverlap, type RangeSet,
} from './range-set.js';
import type { RangeConfig } from './range.js';
import { kdpError, isKdpError } from '../../errors.js';

export interface HostLocalIpam {
  readonly rangeSets: readonly RangeSet[];
  /** Allocates one IP per range set; `requested` IPs are matched to their range set. */
  allocate(id: string, ifname: string, requested?: readonly string[]): IPConfig[];
  release(id: string, ifname: string): string[];
  /** The IPs held by (id, ifname), for CHECK. */
  get(id: string, ifname: string): string[];
}

export function buildHostLocalIpam(
  ranges: readonly (readonly RangeConfig[])[],
  store: IpamStore,
): HostLocalIpam {
  const sets = ranges.map(canonicalizeRangeSet);
  for (let i = 0; i < sets.length; i++) {
    for (let j = i + 1; j < sets.length; j++) {
      if (rangeSetsOverlap(sets[i]!, sets[j]!)) {
        throw kdpError('KDP_CONFIG', `range set ${i} overlaps with ${j}`);
      }
    }
  }
  const allocators = sets.map((s, i) => buildAllocator(s, store, String(i)));
  return {
    rangeSets: sets,
    allocate(id, ifname, requested = []) {
      store.lock();
      try {
        const out: IPConfig[] = [];
        const left = new Set(requested);
        try {
          allocators.forEach((a, i) => {
            const req = [...left].find((ip) => rangeSetContains(sets[i]!, ip.split('/')[0]!));
            if (req) left.delete(req);
            out.push(wrap(i, () => a.get(id, ifname, req?.split('/')[0])));
          });
        } catch (e) {
          if (out.length > 0) store.releaseByID(id, ifname);
          throw e;
        }
        if (left.size > 0) {
          store.releaseByID(id, ifname);
          throw kdpError('KDP_CONFLICT', `failed to allocate all requested IPs: ${[...left]}`);
        }
        return out;
      } finally {
        store.unlock();
      }
    },
    release(id, ifname) {
      store.lock();
      try { return store.releaseByID(id, ifname); } finally { store.unlock(); }
    },
    get: (id, ifname) => store.getByID(id, ifname),
  };
}

function wrap<T>(i: number, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    const msg = `failed to allocate for range ${i}: ${(e as Error).message}`;
    throw isKdpError(e) ? kdpError(e.code, msg, e.details, e) : new Error(msg, { cause: e });
  }
}
