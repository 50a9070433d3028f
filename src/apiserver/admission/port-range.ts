// The NodePort range (`--service-node-port-range`, default 30000-32767) as an allocator, with
// upstream's static band (min 16, max 128, step 32) kept for explicit requests.

import { kdpError } from '../../errors.js';
import { RangeAllocator, staticBand, type Random } from './range-allocator.js';

export type PortAllocateResult = { ok: true } | { ok: false; error: string };

/** Parses `30000-32767` or `30000+2767` (upstream utilnet.ParsePortRange). */
export function parsePortRange(s: string): { base: number; size: number } {
  const m = /^\s*(\d+)\s*([-+])\s*(\d+)\s*$/.exec(s) ?? /^\s*(\d+)\s*$/.exec(s);
  const bad = () => kdpError('KDP_CONFIG', `--service-node-port-range: ${JSON.stringify(s)} is ` +
    'not a port range like 30000-32767');
  if (!m) throw bad();
  const base = Number(m[1]);
  let size = 1;
  if (m[2] === '-') size = Number(m[3]) - base + 1;
  else if (m[2] === '+') size = Number(m[3]) + 1;
  if (base < 1 || base > 65535 || size < 1 || base + size - 1 > 65535) throw bad();
  return { base, size };
}

export class PortRange {
  readonly base: number;
  readonly size: number;
  private readonly bits: RangeAllocator;

  constructor(range: string, random: Random) {
    ({ base: this.base, size: this.size } = parsePortRange(range));
    this.bits = new RangeAllocator(this.size, staticBand(this.size, 16, 128, 32), random);
  }

  get text(): string {
    return `${this.base}-${this.base + this.size - 1}`;
  }

  contains(port: number): boolean {
    return Number.isInteger(port) && port >= this.base && port < this.base + this.size;
  }

  allocate(port: number): PortAllocateResult {
    if (!this.contains(port)) {
      return { ok: false, error: 'provided port is not in the valid range. The range of valid ' +
        `ports is ${this.text}` };
    }
    if (!this.bits.allocate(port - this.base)) {
      return { ok: false, error: 'provided port is already allocated' };
    }
    return { ok: true };
  }

  allocateNext(): number | undefined {
    const off = this.bits.allocateNext();
    return off === undefined ? undefined : this.base + off;
  }

  release(port: number): void {
    if (this.contains(port)) this.bits.release(port - this.base);
  }

  has(port: number): boolean {
    return this.contains(port) && this.bits.has(port - this.base);
  }

  get used(): number {
    return this.bits.count;
  }

  reset(ports: Iterable<number>): void {
    const offs: number[] = [];
    for (const p of ports) if (this.contains(p)) offs.push(p - this.base);
    this.bits.reset(offs);
  }
}
