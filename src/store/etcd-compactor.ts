// The API server's etcd compactor, as upstream's (k8s.io/apiserver storage/etcd3/compact.go):
// every interval (`--etcd-compaction-interval`, default 5 min; 0 turns it off) the history older
// than one interval is compacted away, so etcd's database stays bounded while a watcher that was
// one interval behind can still resume. Several API servers on one etcd compact once per
// interval between them: each tries a compare-and-swap on the key `compact_rev_key` (its version
// counts the compactions; only the one whose view of that count is current wins) and the winner
// compacts to the revision it recorded an interval earlier. The first round only records.

export const COMPACT_REV_KEY = 'compact_rev_key';

export interface CompactorOps {
  /** If `compact_rev_key`'s version is `version`, put `rev` there. The key's version after the
   *  transaction (on failure: the current one) and etcd's revision at that moment. */
  casCompactKey(version: number, rev: number): Promise<{ succeeded: boolean; version: number; revision: number }>;
  compact(rev: number): Promise<void>;
}

export interface CompactorState {
  /** The version of compact_rev_key this server last saw. */
  readonly version: number;
  /** The revision recorded at the last round: the next round compacts to it. */
  readonly revision: number;
}

/** One round; returns the state for the next. */
export async function compactRound(ops: CompactorOps, s: CompactorState): Promise<CompactorState> {
  const r = await ops.casCompactKey(s.version, s.revision);
  if (!r.succeeded) return { version: r.version, revision: r.revision };
  // Won this interval: compact to what was current an interval ago (nothing on the first round).
  if (s.revision > 0) await ops.compact(s.revision);
  return { version: r.version, revision: r.revision };
}

export interface Compactor { stop(): void }

export function startCompactor(ops: CompactorOps, intervalMs: number, onError: (e: unknown) => void): Compactor {
  let state: CompactorState = { version: 0, revision: 0 };
  let running = false;
  const tick = () => {
    if (running) return;
    running = true;
    compactRound(ops, state).then((next) => { state = next; }, onError).finally(() => { running = false; });
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
