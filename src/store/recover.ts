// Start-up recovery of a data directory: latest snapshot, then every WAL record after it, in
// order and without gaps; plus pruning of files a newer snapshot made obsolete.
import { mkdir, unlink } from 'node:fs/promises';
import { KeyIndex } from './mvcc.js';
import { EventRing, type HistoryLimits } from './history.js';
import { deleteEvent, putEvent } from './events.js';
import type { WalRecord } from './record-codec.js';
import { listSnapshots, loadSnapshot } from './snapshot.js';
import { corrupt, listSegments, replaySegment, syncDir } from './wal.js';
import type { ValueCodec } from './value-codec.js';

export interface Recovered {
  readonly index: KeyIndex;
  readonly ring: EventRing;
  /** Last durable revision (1 for a fresh directory). */
  readonly revision: number;
  /** The last segment, cut to its valid length, to keep appending to. */
  readonly tail: { seq: number; size: number } | undefined;
  readonly nextSeq: number;
}

export async function recover(
  dir: string, limits: HistoryLimits, codec: ValueCodec,
): Promise<Recovered> {
  await mkdir(dir, { recursive: true });
  const index = new KeyIndex();
  const snaps = await listSnapshots(dir);
  const latest = snaps[snaps.length - 1];
  const snapRev = latest ?
    (await loadSnapshot(latest.path, codec, (kv) => index.put(kv))).revision : 1;
  const ring = new EventRing(limits, latest ? snapRev : 0);
  let revision = snapRev;

  const apply = (rec: WalRecord, path: string, offset: number): void => {
    if (rec.type === 'compact') {
      if (rec.revision > revision) throw corrupt(path, offset, 'compaction of a future revision');
      ring.compact(rec.revision);
      return;
    }
    if (rec.type === 'commit') return;
    if (rec.revision <= snapRev && revision === snapRev) return; // already in the snapshot
    if (rec.revision !== revision + 1) {
      throw corrupt(path, offset, `expected revision ${revision + 1}, found ${rec.revision}`);
    }
    const prev = index.get(rec.key);
    if (rec.type === 'put') {
      const ev = putEvent(prev, rec.key, codec.pack(rec.value), rec.revision);
      index.put(ev.kv);
      ring.push(ev);
    } else {
      if (!prev) throw corrupt(path, offset, `delete of missing key "${rec.key}"`);
      ring.push(deleteEvent(prev, rec.revision));
      index.remove(rec.key);
    }
    revision = rec.revision;
  };

  const all = await listSegments(dir);
  // Empty segments after the last written one are spares the writer created ahead of time:
  // the last segment with bytes is the one a crash may have torn, and the one to continue
  // (so its truncation is synced when the writer opens it). The spares are removed; the
  // writer makes a new one (restarts do not pile them up).
  let lastWritten = all.length - 1;
  while (lastWritten > 0 && all[lastWritten]!.size === 0) lastWritten--;
  const segs = all.slice(0, lastWritten + 1);
  for (const spare of all.slice(lastWritten + 1)) await unlink(spare.path);
  if (segs.length < all.length) await syncDir(dir);
  let tail: Recovered['tail'];
  for (const [i, seg] of segs.entries()) {
    const isLast = i === segs.length - 1;
    const scan = await replaySegment(seg.path, isLast, (rec, off) => apply(rec, seg.path, off));
    if (isLast) tail = { seq: seg.seq, size: scan.validLength };
  }
  const nextSeq = segs.length > 0 ? segs[segs.length - 1]!.seq + 1 : 1;
  return { index, ring, revision, tail, nextSeq };
}

/** After a snapshot at `revision`: removes older snapshots and segments before `firstKeptSeq`. */
export async function pruneBefore(
  dir: string, revision: number, firstKeptSeq: number, fsync: boolean,
): Promise<void> {
  for (const s of await listSnapshots(dir)) if (s.revision < revision) await unlink(s.path);
  for (const s of await listSegments(dir)) if (s.seq < firstKeptSeq) await unlink(s.path);
  if (fsync) await syncDir(dir);
}
