// Start-up recovery of a data directory: latest snapshot, then every WAL record after it, in
// order and without gaps; plus pruning of files a newer snapshot made obsolete. Damaged WAL
// bytes are handled by the rule in README.md ("Recovery"): a torn final write is cut off, a
// batch whose marker is missing is sealed, anything else refuses to start unless `repair`;
// every change is logged and every dropped byte kept aside first.
import { readFile, unlink } from 'node:fs/promises';
import { basename } from 'node:path';
import { KeyIndex } from './mvcc.js';
import { EventRing, type HistoryLimits } from './history.js';
import { deleteEvent, putEvent } from './events.js';
import type { WalRecord } from './record-codec.js';
import { listSnapshots, loadSnapshot } from './snapshot.js';
import { corrupt, listSegments, syncDir, type Segment } from './wal.js';
import type { ValueCodec } from './value-codec.js';
import { scanSegment, type Damage } from './wal-scan.js';
import {
  describeRecords, keepAside, moveAside, recordsOf, sealBatch, truncateDurably,
} from './wal-repair.js';
import { tightenModes } from '../util/private-files.js';

export interface RecoveryOptions {
  /** Start even when damage is not a torn final write, dropping everything from it on. */
  readonly repair: boolean;
  /** Receives one line per change recovery makes to the data directory. */
  readonly log: (line: string) => void;
  /** Clock for the names of kept-aside files. */
  readonly now?: () => Date;
}

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
  dir: string, limits: HistoryLimits, codec: ValueCodec, ro: RecoveryOptions,
): Promise<Recovered> {
  const modes = await tightenModes(dir, { include: (n) => STORE_FILE_RE.test(n) });
  if (modes.changed.length > 0) {
    ro.log(`store: ${dir}: removed group/other access from ${modes.changed.length} store ` +
      'file(s) and directories (data directories are 0700, their files 0600)');
  }
  if (modes.refused.length > 0) {
    ro.log(`store: ${dir}: WARNING: ${modes.refused.length} store file(s) belong to another ` +
      'user and stay readable by others');
  }
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
    const scan = scanSegment(await readFile(seg.path), isLast);
    for (const r of scan.records) apply(r.rec, seg.path, r.offset);
    const d = scan.damage;
    let size = seg.size;
    if (d) {
      const later = segs.slice(i + 1);
      if (!d.torn && !ro.repair) throw refusal(seg.path, d, revision, later.length);
      await dropFrom(dir, seg, d, later, revision, ro);
      size = d.offset;
    }
    if (scan.unsealed > 0 && (isLast || d)) {
      await sealBatch(seg.path, scan.unsealed);
      size = scan.end + MARKER_BYTES;
      const sealed = scan.records.slice(scan.records.length - scan.unsealed);
      ro.log(`store: ${basename(seg.path)}: kept ${describeRecords(sealed)} of a batch ` +
        `whose commit marker was missing or torn; wrote the marker`);
    }
    if (isLast || d) {
      tail = { seq: seg.seq, size };
      break;
    }
  }
  const nextSeq = tail ? tail.seq + 1 : 1;
  return { index, ring, revision, tail, nextSeq };
}

/** The files the store owns in its directory. */
const STORE_FILE_RE = /^(wal-|snap-|LOCK$)/;

/** Bytes of a commit marker's frame. */
const MARKER_BYTES = 17;

/**
 * Keeps `seg` aside and cuts it at the damage; renames every later segment aside. Logs what
 * was dropped: the damaged bytes and the complete records (by revision) in them.
 */
async function dropFrom(
  dir: string, seg: Segment, d: Damage, later: readonly Segment[], kept: number,
  ro: RecoveryOptions,
): Promise<void> {
  const now = (ro.now ?? (() => new Date()))();
  const copy = await keepAside(seg.path, now);
  await truncateDurably(seg.path, d.offset);
  const dropped = d.torn ? 'a torn final write, no complete record in them' :
    `the bad record and ${describeRecords(d.after)} after it (--repair)`;
  ro.log(`store: ${basename(seg.path)}: ${d.reason} at offset ${d.offset}: dropped ${d.bytes} ` +
    `bytes (${dropped}); kept revisions up to ${kept}; the segment as it was is kept as ` +
    `${basename(copy)}`);
  for (const l of later) {
    const recs = await recordsOf(l.path);
    const to = await moveAside(l.path, now);
    ro.log(`store: ${basename(l.path)}: after the damage: dropped ${l.size} bytes holding ` +
      `${describeRecords(recs)}; moved to ${basename(to)}`);
  }
  await syncDir(dir);
}

function refusal(path: string, d: Damage, kept: number, laterSegments: number): Error {
  const follows = d.after.length > 0 ?
    `; ${describeRecords(d.after)} and ${d.after.filter((r) => r.rec.type === 'commit').length}` +
      ' commit marker(s) follow it, so it is not a torn final write' :
    laterSegments > 0 ? `; ${laterSegments} later segment(s) follow it` :
    '; it is complete in length, so it is not a torn final write';
  return corrupt(path, d.offset, d.reason + follows,
    `. Acknowledged writes would be lost, so the store does not start (nothing was changed; ` +
    `revisions up to ${kept} are intact). Run with --repair to keep everything before offset ` +
    `${d.offset} and drop the rest (the damaged files are kept as <file>.damaged-<time>).`);
}

/** After a snapshot at `revision`: removes older snapshots and segments before `firstKeptSeq`. */
export async function pruneBefore(
  dir: string, revision: number, firstKeptSeq: number, fsync: boolean,
): Promise<void> {
  for (const s of await listSnapshots(dir)) if (s.revision < revision) await unlink(s.path);
  for (const s of await listSegments(dir)) if (s.seq < firstKeptSeq) await unlink(s.path);
  if (fsync) await syncDir(dir);
}
