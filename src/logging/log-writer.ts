// The log store's single writer (the `kdp up` process). Records are buffered and written every
// `flushMs` (or sooner past 1 MiB), to the newest segment; a segment past `segmentBytes` is
// sealed and a new one begun; after each flush the oldest segments are deleted while the store
// is over `maxBytes`. A writer never appends to a segment it did not start: on open, a segment
// left by a previous run is sealed as it is and a new one begun.

import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { writePrivateFileSync } from '../util/private-files.js';
import {
  encodeMeta, listSegments, META_BYTES, metaRecordCount, readSummary, segmentBytes, segmentFiles,
  timeRange, type SegmentFiles, type SegmentSummary,
} from './segments.js';
import { sourceKey, type LogRecord, type LogSource } from './record.js';

export interface LogWriterOptions {
  readonly dir: string;
  /** The store's size bound over all its files; default 256 MiB. */
  readonly maxBytes?: number;
  /** A segment is sealed past this many message bytes; default min(16 MiB, maxBytes / 8). */
  readonly segmentBytes?: number;
  /** Default 100 ms. 0: the caller flushes. */
  readonly flushMs?: number;
  /** A timed flush that failed (disk full): its records are dropped, the writer goes on. */
  readonly onError?: (e: unknown) => void;
}

export interface LogWriter {
  /** Queues a record; a message with newlines becomes one record per line. */
  append(rec: LogRecord): void;
  /** Writes everything queued. */
  flush(): void;
  /** Flushes, seals the current segment and stops the timer. Idempotent. */
  close(): void;
}

export const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
/** Longer lines are cut (a runaway line must not take a whole segment). */
export const MAX_MESSAGE_BYTES = 64 * 1024;
const MAX_SOURCES = 0xffff;

interface Active {
  readonly files: SegmentFiles;
  readonly fds: { log: number; meta: number; src: number };
  readonly sources: Map<string, number>;
  logBytes: number;
  records: number;
  minTime: number;
  maxTime: number;
}

export function openLogWriter(o: LogWriterOptions): LogWriter {
  const maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
  const segmentLimit = o.segmentBytes ?? Math.min(16 * 1024 * 1024, Math.floor(maxBytes / 8));
  mkdirSync(o.dir, { recursive: true, mode: 0o700 });
  const existing = listSegments(o.dir);
  for (const f of existing) if (!readSummary(f.sum)) sealFiles(f);
  let nextSeq = (existing.at(-1)?.seq ?? 0) + 1;
  // Sizes of the sealed segments, oldest first (the bound counts them and the active one).
  const sealed = existing.map((f) => ({ files: f, bytes: segmentBytes(f) }));
  let active: Active | undefined;
  let queue: LogRecord[] = [];
  let queuedBytes = 0;
  let closed = false;
  const timedFlush = () => { try { flush(); } catch (e) { o.onError?.(e); } };
  const timer = (o.flushMs ?? 100) > 0 ? setInterval(timedFlush, o.flushMs ?? 100) : undefined;
  timer?.unref();
  enforceBound();

  function open(): Active {
    const files = segmentFiles(o.dir, nextSeq++);
    const fd = (p: string) => openSync(p, 'a', 0o600);
    return { files, fds: { src: fd(files.src), log: fd(files.log), meta: fd(files.meta) },
      sources: new Map(), logBytes: 0, records: 0, minTime: Infinity, maxTime: -Infinity };
  }

  function seal(a: Active): void {
    closeSync(a.fds.src); closeSync(a.fds.log); closeSync(a.fds.meta);
    const sum: SegmentSummary = { records: a.records, minTime: a.minTime, maxTime: a.maxTime };
    writePrivateFileSync(a.files.sum, `${JSON.stringify(sum)}\n`);
    sealed.push({ files: a.files, bytes: segmentBytes(a.files) });
  }

  function enforceBound(): void {
    const activeBytes = active ? active.logBytes + active.records * META_BYTES : 0;
    let total = activeBytes + sealed.reduce((n, s) => n + s.bytes, 0);
    while (total > maxBytes && sealed.length > 0) {
      const old = sealed.shift()!;
      for (const p of [old.files.meta, old.files.sum, old.files.log, old.files.src]) rmSync(p, { force: true });
      total -= old.bytes;
    }
  }

  /** Writes one batch to the active segment: sources first, then messages, then meta. */
  function writeBatch(a: Active, recs: Array<{ rec: LogRecord; bytes: number }>, newSources: LogSource[]) {
    if (recs.length === 0) return;
    if (newSources.length) {
      writeSync(a.fds.src, newSources.map((s) => `${JSON.stringify(s)}\n`).join(''));
    }
    const meta = Buffer.allocUnsafe(recs.length * META_BYTES);
    let text = '';
    let offset = a.logBytes;
    for (let i = 0; i < recs.length; i++) {
      const { rec, bytes } = recs[i]!;
      encodeMeta(meta, i * META_BYTES, rec.time, offset, a.sources.get(sourceKey(rec.source))!, rec.stream);
      text += `${rec.message}\n`;
      offset += bytes;
      if (rec.time < a.minTime) a.minTime = rec.time;
      if (rec.time > a.maxTime) a.maxTime = rec.time;
    }
    writeSync(a.fds.log, text);
    writeSync(a.fds.meta, meta);
    a.logBytes = offset;
    a.records += recs.length;
  }

  /** Writes what is queued; on a failed write the segment is left as it is (sealed on the next
   *  open) and the next record starts a new one, so offsets never point past what was written. */
  function flush(): void {
    try {
      writeQueued();
    } catch (e) {
      if (active) {
        for (const fd of [active.fds.src, active.fds.log, active.fds.meta]) {
          try { closeSync(fd); } catch { /* already closed */ }
        }
        sealed.push({ files: active.files, bytes: segmentBytes(active.files) });
        active = undefined;
      }
      throw e;
    }
  }

  function writeQueued(): void {
    if (queue.length === 0) return;
    const recs = queue;
    queue = [];
    queuedBytes = 0;
    let batch: Array<{ rec: LogRecord; bytes: number }> = [];
    let newSources: LogSource[] = [];
    let batchBytes = 0;
    for (const rec of recs) {
      const bytes = Buffer.byteLength(rec.message) + 1;
      const key = sourceKey(rec.source);
      const full = active !== undefined && active.records + batch.length > 0
        && active.logBytes + batchBytes + bytes > segmentLimit;
      const noIds = active !== undefined && !active.sources.has(key) && active.sources.size >= MAX_SOURCES;
      if (active && (full || noIds)) {
        writeBatch(active, batch, newSources);
        seal(active);
        active = undefined;
        batch = []; newSources = []; batchBytes = 0;
      }
      active ??= open();
      if (!active.sources.has(key)) {
        active.sources.set(key, active.sources.size);
        newSources.push(rec.source);
      }
      batch.push({ rec, bytes });
      batchBytes += bytes;
    }
    if (active) writeBatch(active, batch, newSources);
    enforceBound();
  }

  return {
    append(rec) {
      if (closed) return;
      const lines = rec.message.includes('\n') ? rec.message.split('\n') : [rec.message];
      if (lines.length > 1 && lines.at(-1) === '') lines.pop();
      for (let line of lines) {
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line.length > MAX_MESSAGE_BYTES / 4 && Buffer.byteLength(line) > MAX_MESSAGE_BYTES) {
          line = Buffer.from(line).subarray(0, MAX_MESSAGE_BYTES).toString().replace(/\uFFFD$/, '');
        }
        queue.push(lines.length === 1 && line === rec.message ? rec : { ...rec, message: line });
        queuedBytes += line.length;
      }
      if (queuedBytes > 1024 * 1024) timedFlush();
    },
    flush,
    close() {
      if (closed) return;
      flush();
      closed = true;
      if (timer) clearInterval(timer);
      if (active) { seal(active); active = undefined; }
    },
  };
}

/** Seals a segment left unsealed by a run that ended without closing its writer. */
function sealFiles(f: SegmentFiles): void {
  const count = metaRecordCount(f.meta);
  let meta: Buffer;
  try { meta = readFileSync(f.meta); } catch { return; }
  const { min, max } = timeRange(meta, 0, count);
  writePrivateFileSync(f.sum, `${JSON.stringify({ records: count, minTime: min, maxTime: max })}\n`);
}
