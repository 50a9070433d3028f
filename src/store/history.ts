// The bounded history window: the most recent events, one per revision, in a ring. Every event
// with revision > `floor` is retained; older ones were evicted (window full) or compacted, and
// reads or watches that would need them get KDP_GONE.
import type { StoredEvent } from './events.js';

export interface HistoryLimits {
  /** At most this many events (revisions). */
  readonly maxEvents: number;
  /** At most about this many bytes of keys and (packed) values (UTF-16 length as the measure). */
  readonly maxBytes: number;
}

export class EventRing {
  private readonly buf: (StoredEvent | undefined)[];
  private head = 0;
  private count = 0;
  private bytes = 0;
  private floorRev: number;

  constructor(
    private readonly limits: HistoryLimits,
    floor = 0,
  ) {
    this.buf = new Array<StoredEvent | undefined>(Math.max(1, limits.maxEvents));
    this.floorRev = floor;
  }

  /** Every event with a revision above this is retained. */
  get floor(): number {
    return this.floorRev;
  }

  get length(): number {
    return this.count;
  }

  /** Appends the event of the next revision (revisions are consecutive). */
  push(ev: StoredEvent): void {
    if (this.count === this.buf.length) this.evictOldest();
    this.buf[(this.head + this.count) % this.buf.length] = ev;
    this.count++;
    this.bytes += sizeOf(ev);
    while (this.bytes > this.limits.maxBytes && this.count > 1) this.evictOldest();
  }

  /** Drops every event with revision <= `revision`. */
  compact(revision: number): void {
    while (this.count > 0 && this.at(0).kv.modRevision <= revision) this.evictOldest();
    if (revision > this.floorRev) this.floorRev = revision;
  }

  /** Events with revision > `afterRevision`, oldest first (caller checked it is >= floor). */
  since(afterRevision: number): StoredEvent[] {
    const out: StoredEvent[] = [];
    for (let i = this.firstIndexAfter(afterRevision); i < this.count; i++) out.push(this.at(i));
    return out;
  }

  /** Events with revision > `afterRevision`, newest first. */
  *newestFirstAfter(afterRevision: number): Generator<StoredEvent> {
    const first = this.firstIndexAfter(afterRevision);
    for (let i = this.count - 1; i >= first; i--) yield this.at(i);
  }

  private firstIndexAfter(afterRevision: number): number {
    if (this.count === 0) return 0;
    const firstRev = this.at(0).kv.modRevision;
    return Math.min(this.count, Math.max(0, afterRevision + 1 - firstRev));
  }

  private at(i: number): StoredEvent {
    return this.buf[(this.head + i) % this.buf.length]!;
  }

  private evictOldest(): void {
    const ev = this.at(0);
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) % this.buf.length;
    this.count--;
    this.bytes -= sizeOf(ev);
    if (ev.kv.modRevision > this.floorRev) this.floorRev = ev.kv.modRevision;
  }
}

function sizeOf(ev: StoredEvent): number {
  return 64 + ev.kv.key.length + ev.kv.packed.length;
}
