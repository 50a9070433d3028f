// One Service CIDR as an allocator of addresses (ipallocator.Range): offsets count from the
// first address after the network address; IPv4 also excludes the broadcast address. Offset 0
// (10.96.0.1, the `kubernetes` Service) is only given out on request.

import {
  addToIP, cidrContains, cidrSize, formatCIDR, parseCIDR, parseIP, type IPFamily, type ParsedCIDR,
} from '../../api/net.js';
import { kdpError } from '../../errors.js';
import { RangeAllocator, staticBand, type Random } from './range-allocator.js';

/** Bitmaps larger than this are capped (an IPv6 /64 has more addresses than any cluster). */
const MAX_BITMAP = 1 << 24;

export type IPAllocateResult =
  | { ok: true; ip: string }
  | { ok: false; error: string };

export class IPRange {
  readonly family: IPFamily;
  readonly cidr: string;
  private readonly parsed: ParsedCIDR;
  private readonly bits: RangeAllocator;
  private readonly firstUsable: string;

  constructor(cidr: string, random: Random) {
    const c = parseCIDR(cidr);
    if (!c) throw kdpError('KDP_CONFIG', `service CIDR ${JSON.stringify(cidr)} is not a CIDR`);
    this.parsed = c;
    this.family = c.family;
    this.cidr = formatCIDR(c);
    const total = cidrSize(c);
    const capped = total > BigInt(MAX_BITMAP) ? MAX_BITMAP : Number(total);
    const usable = capped - (c.family === 'IPv4' ? 2 : 1);
    this.bits = new RangeAllocator(usable, staticBand(capped, 16, 256, 16), random, new Set([0]));
    this.firstUsable = addToIP({ family: c.family, value: c.base }, 1);
  }

  /** Offset of an address in this range, or undefined when it is outside the usable range. */
  offsetOf(ip: string): number | undefined {
    const p = parseIP(ip);
    if (!p || p.family !== this.family || !cidrContains(this.parsed, p)) return undefined;
    const off = p.value - this.parsed.base - 1n;
    return off < 0n || off >= BigInt(this.bits.max) ? undefined : Number(off);
  }

  allocate(ip: string): IPAllocateResult {
    const off = this.offsetOf(ip);
    if (off === undefined) {
      return { ok: false, error: `the provided IP (${ip}) is not in the valid range. ` +
        `The range of valid IPs is ${this.cidr}` };
    }
    if (!this.bits.allocate(off)) return { ok: false, error: 'provided IP is already allocated' };
    return { ok: true, ip };
  }

  allocateNext(): string | undefined {
    const off = this.bits.allocateNext();
    return off === undefined ? undefined : addToIP(this.firstUsable, off);
  }

  release(ip: string): void {
    const off = this.offsetOf(ip);
    if (off !== undefined) this.bits.release(off);
  }

  has(ip: string): boolean {
    const off = this.offsetOf(ip);
    return off !== undefined && this.bits.has(off);
  }

  get used(): number {
    return this.bits.count;
  }

  reset(ips: Iterable<string>): void {
    const offs: number[] = [];
    for (const ip of ips) {
      const off = this.offsetOf(ip);
      if (off !== undefined) offs.push(off);
    }
    this.bits.reset(offs);
  }
}
