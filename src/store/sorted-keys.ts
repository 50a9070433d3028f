// An ordered set of strings kept as a list of sorted chunks (a flat B-tree of height 2): insert
// and delete cost O(log n + chunk size), ordered iteration from any key is sequential. A single
// sorted array would make 100k random inserts quadratic.

const MAX_CHUNK = 1024;

/** A position in the set: chunk index and index inside the chunk. */
export interface KeyPos {
  readonly c: number;
  readonly i: number;
}

export class SortedKeys {
  private chunks: string[][] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Position of the first key >= `key` (or the end). */
  lowerBound(key: string): KeyPos {
    const c = this.chunkFor(key);
    if (c === this.chunks.length) return { c, i: 0 };
    return { c, i: lowerIn(this.chunks[c]!, key) };
  }

  /** Position of the first key > `key` (or the end). */
  upperBound(key: string): KeyPos {
    const pos = this.lowerBound(key);
    return this.keyAt(pos) === key ? this.next(pos) : pos;
  }

  keyAt(pos: KeyPos): string | undefined {
    return this.chunks[pos.c]?.[pos.i];
  }

  next(pos: KeyPos): KeyPos {
    const chunk = this.chunks[pos.c];
    if (chunk === undefined) return pos;
    return pos.i + 1 < chunk.length ? { c: pos.c, i: pos.i + 1 } : { c: pos.c + 1, i: 0 };
  }

  /** Number of keys before `pos`. */
  rank(pos: KeyPos): number {
    let n = 0;
    for (let c = 0; c < pos.c && c < this.chunks.length; c++) n += this.chunks[c]!.length;
    return n + pos.i;
  }

  /** Adds `key`; returns false when it was already present. */
  insert(key: string): boolean {
    if (this.chunks.length === 0) {
      this.chunks.push([key]);
      this.count = 1;
      return true;
    }
    let c = this.chunkFor(key);
    if (c === this.chunks.length) c--;
    const chunk = this.chunks[c]!;
    const i = lowerIn(chunk, key);
    if (chunk[i] === key) return false;
    chunk.splice(i, 0, key);
    this.count++;
    if (chunk.length > MAX_CHUNK) this.chunks.splice(c + 1, 0, chunk.splice(MAX_CHUNK >> 1));
    return true;
  }

  /** Removes `key`; returns false when it was absent. */
  delete(key: string): boolean {
    const pos = this.lowerBound(key);
    const chunk = this.chunks[pos.c];
    if (chunk === undefined || chunk[pos.i] !== key) return false;
    chunk.splice(pos.i, 1);
    if (chunk.length === 0) this.chunks.splice(pos.c, 1);
    this.count--;
    return true;
  }

  /**
   * Calls `visit(key, c, i)` for keys from `pos` on, in order, until it returns false.
   * Allocation-free: the hot loop of every list.
   */
  scan(pos: KeyPos, visit: (key: string, c: number, i: number) => boolean): void {
    for (let c = pos.c, i = pos.i; c < this.chunks.length; c++, i = 0) {
      const chunk = this.chunks[c]!;
      for (; i < chunk.length; i++) if (!visit(chunk[i]!, c, i)) return;
    }
  }

  *keysFrom(pos: KeyPos): Generator<string> {
    for (let c = pos.c, i = pos.i; c < this.chunks.length; c++, i = 0) {
      const chunk = this.chunks[c]!;
      for (; i < chunk.length; i++) yield chunk[i]!;
    }
  }

  /** Index of the first chunk whose last key is >= `key`. */
  private chunkFor(key: string): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = this.chunks[mid]!;
      if (chunk[chunk.length - 1]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function lowerIn(arr: readonly string[], key: string): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
