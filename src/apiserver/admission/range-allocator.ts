// A bitmap over offsets [0, max) with upstream's allocation strategy
// (pkg/registry/core/service/allocator randomScanStrategyWithOffset): dynamic allocation scans
// from a random start in the upper subrange [offset, max) first, then in the static lower band
// [0, offset) that is kept for explicit requests. Offsets in `neverDynamic` are only given out
// on request (the `kubernetes` Service's address).

export type Random = () => number;

export class RangeAllocator {
  private readonly used = new Set<number>();

  constructor(
    readonly max: number,
    private readonly offset: number,
    private readonly random: Random,
    private readonly neverDynamic: ReadonlySet<number> = new Set(),
  ) {}

  /** False when the offset is already taken. The caller checks the range. */
  allocate(at: number): boolean {
    if (this.used.has(at)) return false;
    this.used.add(at);
    return true;
  }

  allocateNext(): number | undefined {
    const upper = this.max - this.offset;
    const hit = this.scan(this.offset, upper) ?? this.scan(0, this.offset);
    if (hit !== undefined) this.used.add(hit);
    return hit;
  }

  release(at: number): void {
    this.used.delete(at);
  }

  has(at: number): boolean {
    return this.used.has(at);
  }

  get count(): number {
    return this.used.size;
  }

  /** Replaces the whole bitmap (repair). */
  reset(offsets: Iterable<number>): void {
    this.used.clear();
    for (const o of offsets) this.used.add(o);
  }

  private scan(base: number, size: number): number | undefined {
    if (size <= 0) return undefined;
    const start = Math.floor(this.random() * size);
    for (let i = 0; i < size; i++) {
      const at = base + ((start + i) % size);
      if (!this.used.has(at) && !this.neverDynamic.has(at)) return at;
    }
    return undefined;
  }
}

/** Upstream calculateRangeOffset: min(max(min, size/step), max), 0 for tiny ranges. */
export function staticBand(size: number, min: number, max: number, step: number): number {
  if (size <= min) return 0;
  return Math.min(Math.max(Math.floor(size / step), min), max);
}
