// Write-ahead log: numbered segment files `wal-<seq>.log` of framed records. Each group-commit
// batch is one write of its records followed by a commit marker, durable when it returns (the
// segment is opened O_DSYNC: write and fdatasync in one system call, so a batch costs one trip
// to libuv's thread pool and back instead of two, each of which waits for the busy event loop);
// a write is acknowledged only after that. Replay and the damage rule: wal-scan.ts, recover.ts.
// The next segment is created (and its directory entry made durable) ahead of time, in the
// background: a rotation on the commit path only switches files, where creating one there cost
// a directory fsync (tens of ms behind a snapshot's writes) on the batch that rotates. So the
// newest segment may be an empty spare: "the last segment" means the last one with any bytes
// (recovery removes the spare and continues that one).
import { constants } from 'node:fs';
import { open, readdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { kdpError } from '../errors.js';
import type { LogSink } from './group-commit.js';
import { walFrameSize, writeWalFrame, type WalRecord } from './record-codec.js';
import { openPrivate } from '../util/private-files.js';

export interface WalOptions {
  /** fdatasync after every batch (default true). Off only for tests and benchmarks. */
  readonly fsync: boolean;
  /** Start a new segment once the current one reaches this size. */
  readonly segmentBytes: number;
}

export interface Segment {
  readonly seq: number;
  readonly path: string;
  /** Size in bytes when listed. */
  readonly size: number;
}

const SEGMENT_RE = /^wal-([0-9a-f]{16})\.log$/;

export function segmentPath(dir: string, seq: number): string {
  return join(dir, `wal-${seq.toString(16).padStart(16, '0')}.log`);
}

/** WAL segments in `dir`, oldest first. */
export async function listSegments(dir: string): Promise<Segment[]> {
  const out: Segment[] = [];
  for (const name of await readdir(dir)) {
    const m = SEGMENT_RE.exec(name);
    if (!m) continue;
    const path = join(dir, name);
    out.push({ seq: parseInt(m[1]!, 16), path, size: (await stat(path)).size });
  }
  return out.sort((a, b) => a.seq - b.seq);
}

/** fsyncs a directory so that created, renamed or removed entries are durable. */
export async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** A segment being created ahead of its use (resolves to undefined if that failed). */
type Spare = Promise<FileHandle | undefined>;

export class WalWriter implements LogSink {
  private rotateRequested = false;
  /** Reused for every batch: per-batch allocations fragment the native heap and inflate RSS. */
  private buf = Buffer.allocUnsafeSlow(256 * 1024);
  /** Segment `seq + 1`, created in the background. */
  private spare: Spare;

  private constructor(
    private readonly dir: string,
    private readonly opts: WalOptions,
    private fh: FileHandle,
    private seq: number,
    private size: number,
  ) {
    this.spare = this.prepareSpare();
  }

  /**
   * Creates segment `seq + 1` now, off the commit path. A failure is not reported here: the
   * rotation then creates the segment itself and fails the batch with the real error.
   */
  private prepareSpare(): Spare {
    return WalWriter.create(this.dir, this.seq + 1, this.opts.fsync).catch(() => undefined);
  }

  /** Continues `tail` (already cut to its valid length) or starts segment `nextSeq`. */
  static async open(
    dir: string, opts: WalOptions, tail: { seq: number; size: number } | undefined, nextSeq: number,
  ): Promise<WalWriter> {
    if (tail) {
      const fh = await openPrivate(segmentPath(dir, tail.seq), appendFlags(opts.fsync));
      if (opts.fsync) await fh.datasync(); // makes a replay's truncation of a torn tail durable
      return new WalWriter(dir, opts, fh, tail.seq, tail.size);
    }
    const fh = await WalWriter.create(dir, nextSeq, opts.fsync);
    return new WalWriter(dir, opts, fh, nextSeq, 0);
  }

  /** A new, empty segment whose directory entry is durable; on failure nothing is left. */
  private static async create(dir: string, seq: number, fsync: boolean): Promise<FileHandle> {
    const path = segmentPath(dir, seq);
    const fh = await openPrivate(path, appendFlags(fsync) | constants.O_EXCL);
    try {
      await syncDir(dir);
      return fh;
    } catch (e) {
      await fh.close().catch(() => undefined);
      await unlink(path).catch(() => undefined);
      throw e;
    }
  }

  /** Asks for the next batch to go to a new segment; returns that segment's number. */
  requestRotate(): number {
    this.rotateRequested = true;
    return this.seq + 1;
  }

  async append(records: readonly WalRecord[]): Promise<void> {
    if (this.rotateRequested || this.size >= this.opts.segmentBytes) await this.rotate();
    const marker: WalRecord = { type: 'commit', revision: records.length };
    let need = walFrameSize(marker);
    for (const r of records) need += walFrameSize(r);
    if (need > this.buf.length) this.buf = Buffer.allocUnsafeSlow(2 ** Math.ceil(Math.log2(need)));
    let end = 0;
    for (const r of records) end = writeWalFrame(this.buf, end, r);
    end = writeWalFrame(this.buf, end, marker);
    for (let off = 0; off < end; ) {
      const { bytesWritten } = await this.fh.write(this.buf, off, end - off);
      off += bytesWritten;
    }
    this.size += end;
  }

  /** Closes the current segment and the spare (left on disk, empty: the next open uses it). */
  async close(): Promise<void> {
    const spare = this.spare;
    try {
      await this.fh.close();
    } finally {
      await (await spare)?.close();
    }
  }

  private async rotate(): Promise<void> {
    this.rotateRequested = false;
    const next = await this.spare ?? await WalWriter.create(this.dir, this.seq + 1,
      this.opts.fsync);
    await this.fh.close();
    this.fh = next;
    this.seq++;
    this.size = 0;
    this.spare = this.prepareSpare();
  }
}

/** Append-only; with `fsync`, every write is durable when it returns (O_DSYNC). */
function appendFlags(fsync: boolean): number {
  return constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND |
    (fsync ? constants.O_DSYNC : 0);
}

export function corrupt(path: string, offset: number, reason: string, advice = '') {
  const msg = `${path}: corrupt record at offset ${offset}: ${reason}${advice}`;
  return kdpError('KDP_STORE_CORRUPT', msg);
}
