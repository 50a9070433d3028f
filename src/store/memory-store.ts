// The in-memory store: the embedded store's exact semantics (revisions, conflicts, history,
// watch, compaction) with no data directory. For tests and `--ephemeral` clusters.
import { EmbeddedStore } from './embedded-store.js';
import { EventRing } from './history.js';
import { KeyIndex } from './mvcc.js';
import { resolveStoreOptions, type EmbeddedStoreOptions } from './options.js';
import type { StoreBackend } from './types.js';
import { ValueCodec } from './value-codec.js';

export type MemoryStoreOptions = Omit<EmbeddedStoreOptions, 'dataDir' | 'fsync'>;

export function buildMemoryStore(o: MemoryStoreOptions = {}): StoreBackend {
  const opts = resolveStoreOptions({ ...o, dataDir: undefined });
  const ring = new EventRing({ maxEvents: opts.historyWindow, maxBytes: opts.historyBytes });
  return new EmbeddedStore({ index: new KeyIndex(), ring, revision: 1, wal: undefined,
    codec: new ValueCodec(opts.packValues ? undefined : []) }, opts);
}
