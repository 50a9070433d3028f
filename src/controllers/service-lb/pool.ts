// The lab cloud's LoadBalancer address pool (`--lb-cidr`): at most one CIDR per IP family; every
// address of a CIDR is usable (MetalLB's pools without avoidBuggyIPs). Allocation is lowest free
// address first, so a freed address is the next one handed out. State is in memory only; the
// controller re-occupies what Services' statuses hold when it starts.

import type { IPFamily } from '../../api/types/service.js';
import {
  canonicalIP, cidrContains, cidrSize, ipFamilyOf, nthAddress, parseCIDR, formatCIDR,
} from '../../api/net.js';
import { kdpError } from '../../errors.js';

/** A range on the underlay (172.18.0.0/16, nodes count up from 172.18.0.2), as kind+MetalLB guides use. */
export const DEFAULT_LB_CIDR = '172.18.255.200/29';

export interface LbPool {
  /** Canonical CIDRs, in flag order. */
  readonly cidrs: readonly string[];
  hasFamily(f: IPFamily): boolean;
  /** In some CIDR of the pool. */
  contains(ip: string): boolean;
  isFree(ip: string): boolean;
  /** Marks `ip` used; false when it is outside the pool or already used. */
  occupy(ip: string): boolean;
  release(ip: string): void;
  /** The lowest free address of the family, marked used; undefined when exhausted. */
  allocate(f: IPFamily): string | undefined;
  /** Free addresses of the family (capped at 2^53 for large IPv6 pools). */
  free(f: IPFamily): number;
}

/** `--cloud-provider`: `kdp` (the lab cloud) or `none` (no cloud-controller-manager). */
export function parseCloudProvider(v: string | undefined): 'kdp' | 'none' {
  if (v === undefined || v === 'kdp') return 'kdp';
  if (v === 'none' || v === '') return 'none';
  throw kdpError('KDP_CONFIG', `--cloud-provider: expected kdp or none, got ${JSON.stringify(v)}`);
}

/** Parses `--lb-cidr` (one CIDR, or one per family comma-separated); errors name the flag. */
export function parseLbCidrs(input: string): string[] {
  const parts = input.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (!parts.length) throw kdpError('KDP_CONFIG', `--lb-cidr: expected a CIDR, got ${JSON.stringify(input)}`);
  if (parts.length > 2) throw kdpError('KDP_CONFIG', `--lb-cidr: at most one CIDR per IP family, got ${parts.length}`);
  const out: string[] = [];
  const families = new Set<IPFamily>();
  for (const p of parts) {
    const c = parseCIDR(p);
    if (!c) throw kdpError('KDP_CONFIG', `--lb-cidr: ${JSON.stringify(p)} is not a CIDR`);
    if (families.has(c.family)) throw kdpError('KDP_CONFIG', `--lb-cidr: two ${c.family} CIDRs (${input}); give one per family`);
    families.add(c.family);
    out.push(formatCIDR(c));
  }
  return out;
}

export function buildLbPool(cidrs: readonly string[]): LbPool {
  const byFamily = new Map<IPFamily, string>();
  for (const c of cidrs) byFamily.set(parseCIDR(c)!.family, c);
  const used = new Set<string>();
  const canon = (ip: string) => canonicalIP(ip);
  const cidrOf = (ip: string) => {
    const f = ipFamilyOf(ip);
    const c = f && byFamily.get(f);
    return c && cidrContains(c, ip) ? c : undefined;
  };
  return {
    cidrs: [...cidrs],
    hasFamily: (f) => byFamily.has(f),
    contains: (ip) => cidrOf(ip) !== undefined,
    isFree(ip) {
      const c = canon(ip);
      return c !== undefined && cidrOf(c) !== undefined && !used.has(c);
    },
    occupy(ip) {
      const c = canon(ip);
      if (!c || !cidrOf(c) || used.has(c)) return false;
      used.add(c);
      return true;
    },
    release(ip) {
      const c = canon(ip);
      if (c) used.delete(c);
    },
    allocate(f) {
      const cidr = byFamily.get(f);
      if (!cidr) return undefined;
      const size = cidrSize(cidr);
      // `used` is small: at most used.size + 1 probes.
      for (let i = 0n; i < size; i++) {
        const ip = nthAddress(cidr, i);
        if (!used.has(ip)) { used.add(ip); return ip; }
      }
      return undefined;
    },
    free(f) {
      const cidr = byFamily.get(f);
      if (!cidr) return 0;
      let inUse = 0n;
      for (const ip of used) if (cidrOf(ip) === cidr) inUse++;
      const n = cidrSize(cidr) - inUse;
      return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
    },
  };
}
