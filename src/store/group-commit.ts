// Group commit: writes submitted while a flush is in flight wait and share the next one, so
// many concurrent writers pay for one fsync. Batches are flushed strictly one after another;
// `onCommitted` runs synchronously for each durable batch (in submission order) before the
// batch's promises resolve, so callers observe their write applied and watchers see revisions
// in order. After a failed flush every pending and later write is rejected: the in-memory state
// may be ahead of the disk, so the store must be reopened.
import { kdpError } from '../errors.js';
import type { WalRecord } from './record-codec.js';
import { FLUSH_BUCKETS_MS, type CommitStats } from './types.js';

/** Where batches go: write every record and make them durable before resolving. */
export interface LogSink {
  append(records: readonly WalRecord[]): Promise<void>;
}

interface Entry<T> {
  readonly item: T;
  readonly record: WalRecord | undefined;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

export class GroupCommitter<T> {
  private queue: Entry<T>[] = [];
  private running: Promise<void> | undefined;
  private failure: Error | undefined;
  private counters = { batches: 0, records: 0, flushMs: 0,
    flushBuckets: FLUSH_BUCKETS_MS.map(() => 0) };

  constructor(
    private readonly sink: LogSink | undefined,
    private readonly onCommitted: (items: readonly T[]) => void,
  ) {}

  /** Resolves once `record` is durable and `item` has been passed to `onCommitted`. */
  submit(item: T, record: WalRecord | undefined): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ item, record, resolve, reject });
      if (!this.running) {
        // A microtask: writes submitted in the same tick join the first batch.
        this.running = new Promise<void>((done) => {
          queueMicrotask(() => void this.run().then(done));
        });
      }
    });
  }

  stats(): CommitStats {
    return { ...this.counters, flushBuckets: [...this.counters.flushBuckets] };
  }

  /** Resolves when everything submitted so far has been committed (or rejected). */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  private async run(): Promise<void> {
    while (this.queue.length > 0 && !this.failure) {
      const batch = this.queue;
      this.queue = [];
      try {
        const records = batch.flatMap((e) => (e.record ? [e.record] : []));
        if (this.sink && records.length > 0) await this.flush(records);
        this.onCommitted(batch.map((e) => e.item));
      } catch (e) {
        this.fail(e, batch);
        break;
      }
      for (const e of batch) e.resolve();
    }
    this.running = undefined;
  }

  private async flush(records: readonly WalRecord[]): Promise<void> {
    const t0 = performance.now();
    await this.sink!.append(records);
    const ms = performance.now() - t0;
    const c = this.counters;
    c.batches++;
    c.records += records.length;
    c.flushMs += ms;
    c.flushBuckets[FLUSH_BUCKETS_MS.findIndex((b) => ms <= b)]!++;
  }

  private fail(cause: unknown, batch: Entry<T>[]): void {
    this.failure = kdpError('KDP_INTERNAL', 'store write failed; reopen the store', {}, cause);
    for (const e of [...batch, ...this.queue]) e.reject(this.failure);
    this.queue = [];
  }
}
