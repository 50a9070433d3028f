// The embedded MVCC store: StoreBackend over an in-memory index, a history ring and (with a
// data directory) a write-ahead log with group commit plus periodic snapshots.
//
// A write is validated against the newest state including writes still waiting for their
// fsync (`pending`), gets the next revision, and is applied to the index, the history and the
// watchers only once durable. Reads therefore never see an unacknowledged write, and
// `currentRevision()` is the last durable revision.
import { mkdir } from 'node:fs/promises';
import { kdpError } from '../errors.js';
import type {
  KeyValue, ListOptions, ListResult, StoreBackend, StoreEvent, StoreStats, Watcher, WatchHandlers,
} from './types.js';
import { KeyIndex, listAtRevision } from './mvcc.js';
import { EventRing } from './history.js';
import { WatchHub } from './watch-hub.js';
import { GroupCommitter } from './group-commit.js';
import { deleteEvent, putEvent, type StoredEvent, type StoredKV } from './events.js';
import { ValueCodec } from './value-codec.js';
import { walFrameSize, type WalRecord } from './record-codec.js';
import { resolveStoreOptions, type EmbeddedStoreOptions, type ResolvedOptions } from './options.js';
import { WalWriter } from './wal.js';
import { pruneBefore, recover } from './recover.js';
import { writeSnapshot } from './snapshot.js';
import { acquireDirLock, type DirLock } from './lock.js';
import { PRIVATE_DIR_MODE } from '../util/private-files.js';

type Mutation =
  /** `value`: the put's value as written (so watchers need not unpack it). */
  | { readonly kind: 'event'; readonly event: StoredEvent; readonly value?: string }
  | { readonly kind: 'compact'; readonly revision: number };

/** What a store starts from: a recovered (or empty) state and, when durable, its WAL. */
export interface StoreStart {
  readonly index: KeyIndex;
  readonly ring: EventRing;
  readonly revision: number;
  readonly wal: WalWriter | undefined;
  /** The in-memory form of values (the index and ring hold packed values). */
  readonly codec: ValueCodec;
  /** Released on close. */
  readonly lock?: DirLock;
}

export class EmbeddedStore implements StoreBackend {
  private readonly index: KeyIndex;
  private readonly ring: EventRing;
  private readonly hub: WatchHub;
  private readonly committer: GroupCommitter<Mutation>;
  private readonly wal: WalWriter | undefined;
  private readonly lock: DirLock | undefined;
  private readonly codec: ValueCodec;
  /** Newest not-yet-durable state per key (null: deleted), the revision that set it and the
   *  commit of that write (which, commits being in order, settles every earlier one). */
  private readonly pending = new Map<string,
    { kv: StoredKV | null; revision: number; commit: Promise<void> }>();
  private committedRev: number;
  private assignedRev: number;
  private closing: Promise<void> | undefined;
  private snapshotting: Promise<void> | undefined;
  private writesSinceSnapshot = 0;
  private bytesSinceSnapshot = 0;
  private lastSnapshotBytes = 0;
  /** Unpacked values of recently read keys (by stored version; bounded, cleared when full):
   *  some keys are read on every write (NamespaceLifecycle reads the namespace). */
  private readonly recentReads = new Map<StoredKV, string>();

  constructor(
    start: StoreStart,
    private readonly opts: ResolvedOptions,
  ) {
    this.index = start.index;
    this.ring = start.ring;
    this.wal = start.wal;
    this.lock = start.lock;
    this.codec = start.codec;
    this.committedRev = start.revision;
    this.assignedRev = start.revision;
    this.hub = new WatchHub(opts.watchQueueLimit);
    this.committer = new GroupCommitter(this.wal, (items) => this.onCommitted(items));
  }

  async get(key: string): Promise<KeyValue | undefined> {
    this.assertOpen();
    const kv = this.index.get(key);
    if (!kv) return undefined;
    let value = this.recentReads.get(kv);
    if (value === undefined) {
      value = this.codec.unpack(kv.packed);
      if (this.recentReads.size >= RECENT_READS) this.recentReads.clear();
      this.recentReads.set(kv, value);
    }
    return this.toPublic(kv, value);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.assertOpen();
    const limit = opts.limit ?? 0;
    const rev = opts.revision ?? 0;
    if (rev === 0 || rev === this.committedRev) {
      const page = this.index.page(prefix, opts.startAfter, limit);
      return { ...page, items: page.items.map((kv) => this.toPublic(kv)),
        revision: this.committedRev };
    }
    if (rev > this.committedRev) {
      const msg = `Too large resource version: ${rev}, current: ${this.committedRev}`;
      throw kdpError('KDP_TIMEOUT', msg);
    }
    this.assertRetained(rev);
    const newer = this.ring.newestFirstAfter(rev);
    const page = listAtRevision(this.index, newer, prefix, opts.startAfter, limit);
    return { ...page, items: page.items.map((kv) => this.toPublic(kv)), revision: rev };
  }

  async create(key: string, value: string): Promise<KeyValue> {
    this.assertOpen();
    checkSize(key, value);
    if (this.latest(key)) throw kdpError('KDP_ALREADY_EXISTS', `key "${key}" already exists`);
    const ev = putEvent(undefined, key, this.codec.pack(value), ++this.assignedRev);
    await this.submit(ev, { type: 'put', revision: ev.kv.modRevision, key, value }, value);
    return this.toPublic(ev.kv, value);
  }

  async update(key: string, value: string, expectedModRevision?: number): Promise<KeyValue> {
    this.assertOpen();
    checkSize(key, value);
    const prev = this.existing(key, expectedModRevision);
    const ev = putEvent(prev, key, this.codec.pack(value), ++this.assignedRev);
    await this.submit(ev, { type: 'put', revision: ev.kv.modRevision, key, value }, value);
    return this.toPublic(ev.kv, value);
  }

  async delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    this.assertOpen();
    const prev = this.existing(key, expectedModRevision);
    const ev = deleteEvent(prev, ++this.assignedRev);
    await this.submit(ev, { type: 'delete', revision: ev.kv.modRevision, key });
    return this.toPublic(ev.kv);
  }

  watch(prefix: string, afterRevision: number, handlers: WatchHandlers): Watcher {
    this.assertOpen();
    this.assertRetained(afterRevision);
    const history = this.ring.since(afterRevision)
      .filter((ev) => ev.kv.key.startsWith(prefix)).map((ev) => this.publicEvent(ev));
    return this.hub.add(prefix, afterRevision, history, handlers);
  }

  currentRevision(): number {
    return this.committedRev;
  }

  async compact(revision: number): Promise<void> {
    this.assertOpen();
    if (revision > this.committedRev) {
      const msg = `cannot compact to revision ${revision}, newer than ${this.committedRev}`;
      throw kdpError('KDP_BAD_REQUEST', msg);
    }
    if (revision <= this.ring.floor) return;
    const record: WalRecord | undefined = this.wal ? { type: 'compact', revision } : undefined;
    await this.committer.submit({ kind: 'compact', revision }, record);
  }

  stats(): StoreStats {
    return {
      revision: this.committedRev,
      compactedRevision: this.ring.floor,
      keys: this.index.size,
      ...(this.wal ? { commits: this.committer.stats() } : {}),
    };
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    await this.committer.drain();
    while (this.snapshotting) await this.snapshotting;
    await this.wal?.close();
    await this.lock?.release();
    this.hub.closeAll(kdpError('KDP_STORE_CLOSED', 'store closed'));
  }

  private assertOpen(): void {
    if (this.closing) throw kdpError('KDP_STORE_CLOSED', 'store is closed');
  }

  private assertRetained(revision: number): void {
    if (revision < this.ring.floor) {
      const msg = `revision ${revision} has been compacted (oldest available: ${this.ring.floor})`;
      throw kdpError('KDP_GONE', msg);
    }
  }

  /** The caller's view of a stored value (`value`, when known, saves unpacking it). */
  private toPublic(kv: StoredKV, value?: string): KeyValue {
    return { key: kv.key, value: value ?? this.codec.unpack(kv.packed),
      createRevision: kv.createRevision, modRevision: kv.modRevision, version: kv.version };
  }

  private publicEvent(ev: StoredEvent, value?: string): StoreEvent {
    return new PublicEvent(ev, this.toPublic(ev.kv, value), (kv) => this.toPublic(kv));
  }

  private latest(key: string): StoredKV | undefined {
    const p = this.pending.get(key);
    return p ? (p.kv ?? undefined) : this.index.get(key);
  }

  private existing(key: string, expectedModRevision: number | undefined): StoredKV {
    const prev = this.latest(key);
    if (!prev) throw kdpError('KDP_NOT_FOUND', `key "${key}" not found`);
    if (expectedModRevision !== undefined && prev.modRevision !== expectedModRevision) {
      const msg = `key "${key}" is at revision ${prev.modRevision}, not ${expectedModRevision}`;
      throw kdpError('KDP_CONFLICT', msg);
    }
    return prev;
  }

  settled(key: string): Promise<void> {
    const p = this.pending.get(key);
    return p ? p.commit.then(noop, noop) : Promise.resolve();
  }

  private submit(ev: StoredEvent, rec: WalRecord, value?: string): Promise<void> {
    if (this.wal) this.bytesSinceSnapshot += walFrameSize(rec);
    const commit = this.committer.submit({ kind: 'event', event: ev, value },
      this.wal ? rec : undefined);
    this.pending.set(ev.kv.key, {
      kv: ev.type === 'delete' ? null : ev.kv,
      revision: ev.kv.modRevision,
      commit,
    });
    return commit;
  }

  private onCommitted(items: readonly Mutation[]): void {
    const events: StoreEvent[] = [];
    const watched = this.hub.size > 0;
    let applied = 0;
    for (const m of items) {
      if (m.kind === 'compact') {
        this.ring.compact(m.revision);
        continue;
      }
      const ev = m.event;
      if (ev.type === 'delete') this.index.remove(ev.kv.key);
      else this.index.put(ev.kv);
      this.ring.push(ev);
      const p = this.pending.get(ev.kv.key);
      if (p && p.revision === ev.kv.modRevision) this.pending.delete(ev.kv.key);
      this.committedRev = ev.kv.modRevision;
      applied++;
      if (watched) events.push(this.publicEvent(ev, m.value));
    }
    this.writesSinceSnapshot += applied;
    if (events.length > 0) this.hub.publish(events);
    this.maybeSnapshot();
  }

  private maybeSnapshot(): void {
    const { dataDir, snapshotEvery, snapshotBytes, fsync } = this.opts;
    if (!this.wal || !dataDir || this.snapshotting) return;
    if (this.writesSinceSnapshot < snapshotEvery && this.bytesSinceSnapshot < snapshotBytes) return;
    // Amortised: the whole state is only rewritten once the WAL has grown by as much, so
    // snapshots cost at most as many bytes as the writes, and replay reads at most 2x the state.
    if (this.bytesSinceSnapshot < this.lastSnapshotBytes) return;
    this.writesSinceSnapshot = 0;
    this.bytesSinceSnapshot = 0;
    const revision = this.committedRev;
    const kvs = this.index.values();
    const firstKeptSeq = this.wal.requestRotate();
    this.snapshotting = writeSnapshot(dataDir, revision, this.ring.floor, kvs, fsync, this.codec)
      .then((bytes) => {
        this.lastSnapshotBytes = bytes;
        return pruneBefore(dataDir, revision, firstKeptSeq, fsync);
      })
      .catch((err: unknown) => this.opts.onBackgroundError(err))
      .finally(() => {
        this.snapshotting = undefined;
      });
  }
}

/** A StoreEvent for callers; `prevKv` is unpacked only when read (then kept, so that every
 *  watcher sharing the event sees one object). */
class PublicEvent implements StoreEvent {
  readonly type: StoreEvent['type'];
  readonly created: boolean;
  private prev: KeyValue | undefined;
  constructor(
    private readonly stored: StoredEvent, readonly kv: KeyValue,
    private readonly expand: (kv: StoredKV) => KeyValue,
  ) {
    this.type = stored.type;
    this.created = stored.created;
  }

  get prevKv(): KeyValue | undefined {
    if (!this.prev && this.stored.prevKv) this.prev = this.expand(this.stored.prevKv);
    return this.prev;
  }
}

const RECENT_READS = 1024;

const noop = (): void => {};

/** Largest value accepted (the WAL frames up to 64 MiB; Kubernetes objects stay far below). */
const MAX_VALUE_BYTES = 16 * 1024 * 1024;

function checkSize(key: string, value: string): void {
  if (key.length === 0) throw kdpError('KDP_BAD_REQUEST', 'empty store key');
  if (value.length > MAX_VALUE_BYTES / 3 && Buffer.byteLength(value) > MAX_VALUE_BYTES) {
    throw kdpError('KDP_TOO_LARGE', `value of "${key}" is over ${MAX_VALUE_BYTES} bytes`);
  }
}

/**
 * Opens (recovering) or creates the store in `dataDir`; without `dataDir`, an in-memory store.
 * Only one process may use a data directory at a time.
 */
export async function buildEmbeddedStore(o: EmbeddedStoreOptions = {}): Promise<StoreBackend> {
  const opts = resolveStoreOptions(o);
  const limits = { maxEvents: opts.historyWindow, maxBytes: opts.historyBytes };
  const codec = new ValueCodec(opts.packValues ? undefined : []);
  if (opts.dataDir === undefined) {
    return new EmbeddedStore({ index: new KeyIndex(), ring: new EventRing(limits), revision: 1,
      wal: undefined, codec }, opts);
  }
  // Created private; an existing directory with wider modes is tightened (and logged) by recover.
  await mkdir(opts.dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const lock = await acquireDirLock(opts.dataDir);
  try {
    const r = await recover(opts.dataDir, limits, codec, { repair: opts.repair, log: opts.log });
    const walOpts = { fsync: opts.fsync, segmentBytes: opts.segmentBytes };
    const wal = await WalWriter.open(opts.dataDir, walOpts, r.tail, r.nextSeq);
    const start = { index: r.index, ring: r.ring, revision: r.revision, wal, lock, codec };
    return new EmbeddedStore(start, opts);
  } catch (e) {
    await lock.release();
    throw e;
  }
}
