// A range set: the ranges one IP is chosen from (host-local gives one IP per range set).

import { kdpError } from '../../errors.js';
import {
  canonicalizeRange, rangeContains, rangeString, rangesOverlap, type Range, type RangeConfig,
} from './range.js';

export type RangeSet = readonly Range[];

export function canonicalizeRangeSet(cfg: readonly RangeConfig[]): RangeSet {
  if (cfg.length === 0) throw kdpError('KDP_CONFIG', 'empty range set');
  const set = cfg.map(canonicalizeRange);
  const fam = set[0]!.family;
  if (set.some((r) => r.family !== fam)) {
    throw kdpError('KDP_CONFIG', 'mixed address families in one range set');
  }
  for (let i = 0; i < set.length; i++) {
    for (let j = i + 1; j < set.length; j++) {
      if (rangesOverlap(set[i]!, set[j]!)) {
        throw kdpError('KDP_CONFIG',
          `subnets ${rangeString(set[i]!)} and ${rangeString(set[j]!)} overlap`);
      }
    }
  }
  return set;
}

export function rangeSetContains(set: RangeSet, ip: string): Range | undefined {
  return set.find((r) => rangeContains(r, ip));
}

export function rangeSetsOverlap(a: RangeSet, b: RangeSet): boolean {
  return a.some((x) => b.some((y) => rangesOverlap(x, y)));
}

/** Ranges joined by `,` as host-local prints them in errors. */
export function rangeSetString(set: RangeSet): string {
  return set.map(rangeString).join(',');
}
