// Queries over the log store: a source predicate, a time range and an optional pattern, read
// from the segment files (a running cluster's and a stopped one's alike). A segment is opened
// only if its source table has a matching source and its time range meets the query's; with a
// pattern, only the message file is scanned and the meta read for the lines that matched.
// Results come in time order: each segment's records are sorted, and a record is released once
// no later segment can hold an earlier one (the next segments' smallest start time).

import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { grepFile, type GrepPattern } from './grep-scan.js';
import type { LogRecord, LogSource } from './record.js';
import {
  listSegments, META_BYTES, metaOffset, metaRecordCount, metaSource, metaStream, metaTime,
  readSources, readSummary, timeRange, type SegmentFiles,
} from './segments.js';

export interface LogQuery {
  /** Which sources are wanted; default all. */
  readonly source?: (s: LogSource) => boolean;
  /** Inclusive lower bound, epoch ms. */
  readonly sinceMs?: number;
  readonly untilMs?: number;
  readonly grep?: GrepPattern;
}

/** Where a read stopped: records read per segment, for `follow`. */
export interface LogCursor {
  readonly done: Map<number, number>;
}

export interface ScanStats {
  segments: number;
  segmentsRead: number;
  bytesScanned: number;
}

interface Plan {
  readonly files: SegmentFiles;
  readonly count: number;
  readonly minTime: number;
  readonly maxTime: number;
}

/** Everything matching `q` now, in time order; returns the cursor to follow from. */
export function readLogs(dir: string, q: LogQuery, emit: (r: LogRecord) => void,
  stats?: ScanStats): LogCursor {
  const cursor: LogCursor = { done: new Map() };
  const plans = listSegments(dir).map(plan);
  if (stats) stats.segments += plans.length;
  // Smallest start time among segments i.. (the release watermark after segment i-1).
  const minAfter: number[] = new Array(plans.length + 1).fill(Infinity);
  for (let i = plans.length - 1; i >= 0; i--) minAfter[i] = Math.min(plans[i]!.minTime, minAfter[i + 1]!);
  let pending: LogRecord[] = [];
  for (let i = 0; i < plans.length; i++) {
    const p = plans[i]!;
    cursor.done.set(p.files.seq, p.count);
    for (const r of readSegment(p, 0, q, stats)) pending.push(r);
    pending.sort(byTime);
    const mark = minAfter[i + 1]!;
    let k = 0;
    while (k < pending.length && pending[k]!.time < mark) emit(pending[k++]!);
    pending = pending.slice(k);
  }
  for (const r of pending) emit(r);
  return cursor;
}

/** Records written since `cursor` (new segments included); advances it. Time order within. */
export function readNewLogs(dir: string, q: LogQuery, cursor: LogCursor, emit: (r: LogRecord) => void): void {
  const out: LogRecord[] = [];
  for (const f of listSegments(dir)) {
    const from = cursor.done.get(f.seq) ?? 0;
    const count = metaRecordCount(f.meta);
    if (count <= from) continue;
    cursor.done.set(f.seq, count);
    for (const r of readSegment({ files: f, count, minTime: -Infinity, maxTime: Infinity }, from, q)) out.push(r);
  }
  out.sort(byTime);
  for (const r of out) emit(r);
}

const byTime = (a: LogRecord, b: LogRecord) => a.time - b.time;

function plan(files: SegmentFiles): Plan {
  const sum = readSummary(files.sum);
  if (sum) return { files, count: sum.records, minTime: sum.minTime, maxTime: sum.maxTime };
  const count = metaRecordCount(files.meta);
  let meta: Buffer;
  try { meta = readFileSync(files.meta); } catch { return { files, count: 0, minTime: Infinity, maxTime: -Infinity }; }
  const { min, max } = timeRange(meta, 0, count);
  return { files, count, minTime: min, maxTime: max };
}

/** The records [from, p.count) of one segment that match `q`, in store order. */
function readSegment(p: Plan, from: number, q: LogQuery, stats?: ScanStats): LogRecord[] {
  if (p.count <= from) return [];
  if (q.sinceMs !== undefined && p.maxTime < q.sinceMs) return [];
  if (q.untilMs !== undefined && p.minTime > q.untilMs) return [];
  const sources = readSources(p.files.src);
  const wanted = sources.map((s) => (q.source ? q.source(s) : true));
  if (!wanted.some(Boolean)) return [];
  let meta: Buffer;
  try { meta = readFileSync(p.files.meta); } catch { return []; }
  const count = Math.min(p.count, Math.floor(meta.length / META_BYTES));
  if (stats) stats.segmentsRead++;
  const keep = (i: number) => {
    if (!wanted[metaSource(meta, i)]) return false;
    const t = metaTime(meta, i);
    return !(q.sinceMs !== undefined && t < q.sinceMs) && !(q.untilMs !== undefined && t > q.untilMs);
  };
  const record = (i: number, message: string): LogRecord => ({
    time: metaTime(meta, i), source: sources[metaSource(meta, i)]!, stream: metaStream(meta, i), message,
  });
  const out: LogRecord[] = [];
  if (count <= from) return out;
  const start = metaOffset(meta, from);
  if (q.grep) {
    // The end of the last record's line: the next meta's offset is not there yet, so its
    // message is found by its newline in the first read past it.
    const end = lastLineEnd(p.files.log, metaOffset(meta, count - 1));
    if (end < 0) return out;
    const n = grepFile(p.files.log, start, end, q.grep, (offset, line) => {
      const i = findRecord(meta, from, count, offset);
      if (i >= 0 && keep(i)) out.push(record(i, line));
    });
    if (stats) stats.bytesScanned += n;
    return out;
  }
  const picked: number[] = [];
  for (let i = from; i < count; i++) if (keep(i)) picked.push(i);
  if (picked.length === 0) return out;
  let log: Buffer;
  try { log = readFileSync(p.files.log); } catch { return out; }
  for (const i of picked) {
    const s = metaOffset(meta, i);
    const e = log.indexOf(10, s);
    if (e < 0) break;
    out.push(record(i, log.toString('utf8', s, e)));
  }
  return out;
}

/** Index of the record whose message starts at `offset` (-1: none). */
function findRecord(meta: Buffer, lo: number, hi: number, offset: number): number {
  let a = lo;
  let b = hi - 1;
  while (a <= b) {
    const m = (a + b) >>> 1;
    const o = metaOffset(meta, m);
    if (o === offset) return m;
    if (o < offset) a = m + 1; else b = m - 1;
  }
  return -1;
}

/** The byte just after the newline that ends the line starting at `start`; -1 if none yet. */
function lastLineEnd(file: string, start: number): number {
  const buf = Buffer.allocUnsafe(64 * 1024 + 1);
  let fd: number;
  try { fd = openSync(file, 'r'); } catch { return -1; }
  try {
    for (let pos = start; ;) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n <= 0) return -1;
      const nl = buf.subarray(0, n).indexOf(10);
      if (nl >= 0) return pos + nl + 1;
      pos += n;
    }
  } finally {
    closeSync(fd);
  }
}

/** Records [from, to) of one segment in store order (a shipper's batch, log-shipper.ts). */
export function readSegmentRecords(files: SegmentFiles, from: number, to: number): LogRecord[] {
  return readSegment({ files, count: to, minTime: -Infinity, maxTime: Infinity }, from, {});
}
