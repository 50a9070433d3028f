// Address sets as sorted, disjoint, merged [lo, hi] ranges per family: how an ipBlock (cidr
// minus except) and pod IPs become one nftables interval set without overlapping elements
// (nft refuses overlapping intervals unless the set auto-merges; kdp merges itself so the
// output is canonical).

import type { IPFamily } from '../api/net.js';
import { cidrSize, formatIP, parseCIDR, parseIP } from '../api/net.js';
import type { IPBlock } from './types.js';

export type Range = readonly [bigint, bigint];

export class RangeSet {
  private readonly ranges: Record<IPFamily, Range[]> = { IPv4: [], IPv6: [] };

  addIP(ip: string): void {
    const p = parseIP(ip);
    if (p) this.ranges[p.family].push([p.value, p.value]);
  }

  /** As addIP, for an address already parsed. */
  addParsed(p: { readonly family: IPFamily; readonly value: bigint }): void {
    this.ranges[p.family].push([p.value, p.value]);
  }

  /** Adds `cidr` minus every `except` (invalid entries are ignored: validation refuses them). */
  addBlock(b: IPBlock): void {
    const c = parseCIDR(b.cidr);
    if (!c) return;
    let parts: Range[] = [[c.base, c.base + cidrSize(c) - 1n]];
    for (const e of b.except ?? []) {
      const x = parseCIDR(e);
      if (!x || x.family !== c.family) continue;
      const lo = x.base;
      const hi = x.base + cidrSize(x) - 1n;
      parts = parts.flatMap(([a, z]): Range[] => {
        if (hi < a || lo > z) return [[a, z]];
        const out: Range[] = [];
        if (lo > a) out.push([a, lo - 1n]);
        if (hi < z) out.push([hi + 1n, z]);
        return out;
      });
    }
    this.ranges[c.family].push(...parts);
  }

  /** Sorted, merged (adjacent ranges joined). */
  merged(f: IPFamily): Range[] {
    const sorted = [...this.ranges[f]].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const out: Array<[bigint, bigint]> = [];
    for (const [lo, hi] of sorted) {
      const last = out[out.length - 1];
      if (last && lo <= last[1] + 1n) { if (hi > last[1]) last[1] = hi; } else out.push([lo, hi]);
    }
    return out;
  }

  /** nft element text: `10.0.0.1`, `10.0.0.0-10.0.255.255`. */
  elements(f: IPFamily): string[] {
    return this.merged(f).map(([lo, hi]) => {
      const a = formatIP({ family: f, value: lo });
      return lo === hi ? a : `${a}-${formatIP({ family: f, value: hi })}`;
    });
  }
}
