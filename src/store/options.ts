// Options of the embedded store, validated and defaulted in one place.
import { kdpError } from '../errors.js';

export interface EmbeddedStoreOptions {
  /** Directory for WAL segments and snapshots. Absent: an in-memory store (nothing durable). */
  readonly dataDir?: string;
  /** fdatasync every group-commit batch before acknowledging it (default true). */
  readonly fsync?: boolean;
  /** Take a snapshot after this many writes since the last one (default 10,000). */
  readonly snapshotEvery?: number;
  /** ... or after this many WAL bytes since the last one (default 64 MiB). */
  readonly snapshotBytes?: number;
  /** Start a new WAL segment past this size (default 64 MiB). */
  readonly segmentBytes?: number;
  /** History window: at most this many past revisions kept for watch/list (default 10,000). */
  readonly historyWindow?: number;
  /** ... and at most about this many bytes of them (default 64 MiB). */
  readonly historyBytes?: number;
  /** A watcher more than this many events behind is closed with KDP_GONE (default 100,000). */
  readonly watchQueueLimit?: number;
  /**
   * Keep values in memory in a compact form (about 40 % of the JSON for pods; default true).
   * Costs about 12 µs per 2 KB value written and 6 µs per value read; false keeps plain text.
   */
  readonly packValues?: boolean;
  /** Receives errors of background work (snapshots); writes stay safe in the WAL. */
  readonly onBackgroundError?: (err: unknown) => void;
  /**
   * Start even when the WAL is damaged other than by a torn final write: keep everything before
   * the first damaged record and drop the rest (kept aside as `<file>.damaged-<time>`). Without
   * it such damage is KDP_STORE_CORRUPT (default false; the CLI's `--repair`).
   */
  readonly repair?: boolean;
  /** Receives one line per change recovery makes to the data directory (default: stderr). */
  readonly log?: (line: string) => void;
}

/** What a command that opens the store passes down from its flags (`--repair`) and its log. */
export type StoreStartOptions = Pick<EmbeddedStoreOptions, 'repair' | 'log'>;

export type ResolvedOptions = Required<Omit<EmbeddedStoreOptions, 'dataDir'>> & {
  readonly dataDir: string | undefined;
};

const MIB = 1024 * 1024;

export function resolveStoreOptions(o: EmbeddedStoreOptions): ResolvedOptions {
  const r: ResolvedOptions = {
    dataDir: o.dataDir,
    fsync: o.fsync ?? true,
    snapshotEvery: o.snapshotEvery ?? 10_000,
    snapshotBytes: o.snapshotBytes ?? 64 * MIB,
    segmentBytes: o.segmentBytes ?? 64 * MIB,
    historyWindow: o.historyWindow ?? 10_000,
    historyBytes: o.historyBytes ?? 64 * MIB,
    watchQueueLimit: o.watchQueueLimit ?? 100_000,
    packValues: o.packValues ?? true,
    onBackgroundError: o.onBackgroundError ?? (() => {}),
    repair: o.repair ?? false,
    log: o.log ?? ((line) => void process.stderr.write(`kdp: ${line}\n`)),
  };
  for (const k of [
    'snapshotEvery', 'snapshotBytes', 'segmentBytes', 'historyWindow', 'historyBytes',
    'watchQueueLimit',
  ] as const) {
    if (!Number.isInteger(r[k]) || r[k] < 1) {
      throw kdpError('KDP_CONFIG', `store option ${k} must be a positive integer, got ${r[k]}`);
    }
  }
  return r;
}
