// The narrow storage contract the API server is written against. Semantics follow etcd v3:
// one global revision counter, bumped by every successful write; every key remembers the
// revision that created it and the one that last modified it. The embedded MVCC store and the
// etcd backend both implement this interface, so callers never know which one they have.

/** A stored value at one revision. `value` is the serialized object (JSON text). */
export interface KeyValue {
  readonly key: string;
  readonly value: string;
  /** Revision of the write that created this key (stays across updates). */
  readonly createRevision: number;
  /** Revision of the last write to this key; becomes the object's `resourceVersion`. */
  readonly modRevision: number;
  /** Number of writes since creation, starting at 1. */
  readonly version: number;
}

export interface ListOptions {
  /** Read at this past revision (must not be compacted); default: current. */
  readonly revision?: number;
  /** At most this many items; `more` tells whether more exist. 0 or absent: no limit. */
  readonly limit?: number;
  /** Start strictly after this key (for `continue` tokens). */
  readonly startAfter?: string;
}

export interface ListResult {
  readonly items: readonly KeyValue[];
  /** The revision the list was read at. */
  readonly revision: number;
  /** True when `limit` cut the list short. */
  readonly more: boolean;
  /** Items remaining after this page when `more` is true (Kubernetes `remainingItemCount`). */
  readonly remaining: number;
}

export type WatchEventType = 'put' | 'delete';

/** One change, in revision order. For `delete`, `kv.value` is the last value before deletion
 *  and `kv.modRevision` is the revision of the delete. */
export interface StoreEvent {
  readonly type: WatchEventType;
  readonly kv: KeyValue;
  /** The value before this change, when there was one. */
  readonly prevKv?: KeyValue;
  /** True for a put that created the key. */
  readonly created: boolean;
}

export interface Watcher {
  /** Stops delivery. Idempotent. */
  stop(): void;
}

export interface WatchHandlers {
  /** Events arrive in strictly increasing revision order, never duplicated, never skipped. */
  onEvents(events: readonly StoreEvent[]): void;
  /** Called once if the watch ends from the store's side (store closed, watcher too slow). */
  onClose?(err?: Error): void;
}

export interface StoreStats {
  readonly revision: number;
  readonly compactedRevision: number;
  readonly keys: number;
  /** Group commits since the store opened (a durable store's batches; counters only grow). */
  readonly commits?: CommitStats;
}

export interface CommitStats {
  readonly batches: number;
  readonly records: number;
  /** Total time from a batch's write to its durability (write + sync, as the caller sees
   *  it, event-loop delay included), ms. */
  readonly flushMs: number;
  /** Batches per flush time: `flushBuckets[i]` counts flushes ≤ FLUSH_BUCKETS_MS[i]. */
  readonly flushBuckets: readonly number[];
}

/** Upper bounds (ms) of the buckets of `CommitStats.flushBuckets`. */
export const FLUSH_BUCKETS_MS: readonly number[] = [0.5, 1, 2, 4, 8, 16, 32, 64, 128, Infinity];

/**
 * Storage backend.
 * - Writes are acknowledged only when durable (the embedded store fsyncs its WAL, with group
 *   commit; an in-memory store may be made for tests).
 * - `expectedModRevision` gives optimistic concurrency: a mismatch throws KDP_CONFLICT.
 * - Missing keys throw KDP_NOT_FOUND; `create` on an existing key throws KDP_ALREADY_EXISTS.
 * - Reading or watching at a compacted revision throws KDP_GONE.
 */
export interface StoreBackend {
  get(key: string): Promise<KeyValue | undefined>;
  /** Keys with this prefix, in ascending key order. */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  create(key: string, value: string): Promise<KeyValue>;
  update(key: string, value: string, expectedModRevision?: number): Promise<KeyValue>;
  /** Returns the deleted value (with the delete's revision as modRevision). */
  delete(key: string, expectedModRevision?: number): Promise<KeyValue>;
  /**
   * Delivers every change to keys with `prefix` with revision > `afterRevision`, then live ones.
   * Throws KDP_GONE if `afterRevision` is older than the history window (compacted).
   */
  watch(prefix: string, afterRevision: number, handlers: WatchHandlers): Watcher;
  /** Current revision (the last write's; 1 for an empty fresh store, like etcd). */
  currentRevision(): number;
  /** Drop history older than `revision`; later reads/watches before it throw KDP_GONE. */
  compact(revision: number): Promise<void>;
  stats(): StoreStats;
  /**
   * Resolves once no write to `key` is waiting for its commit (at once when none is), whether
   * that write succeeds or fails. A conditional write that conflicted with a write still being
   * committed can retry then, rather than after a guessed delay. Optional (additive).
   */
  settled?(key: string): Promise<void>;
  close(): Promise<void>;
}
