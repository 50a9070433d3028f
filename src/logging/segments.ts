// The on-disk layout of the log store (one directory per cluster, `<data-dir>/logs/`). Records
// go to numbered segments, each four files:
//   <seq>.log   the messages, one per line (plain text: `grep` reads it as is)
//   <seq>.meta  16 bytes per record, in the same order: f64 time (ms), u32 byte offset of the
//               message in .log, u16 source id, u8 stream (0 stdout, 1 stderr), u8 spare
//   <seq>.src   the segment's sources, one JSON line each; line i is source id i
//   <seq>.sum   written when the segment is sealed: its record count, bytes and time range
// The writer appends .src, then .log, then .meta, so a reader that sees a meta record also
// sees its source and its message. Segments are only ever appended to and then deleted whole,
// oldest first, when the store is over its size bound.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { LogSource, LogStream } from './record.js';

export const META_BYTES = 16;

export interface SegmentSummary {
  readonly records: number;
  readonly minTime: number;
  readonly maxTime: number;
}

export interface SegmentFiles {
  readonly seq: number;
  readonly log: string;
  readonly meta: string;
  readonly src: string;
  readonly sum: string;
}

export function segmentFiles(dir: string, seq: number): SegmentFiles {
  const base = join(dir, String(seq).padStart(8, '0'));
  return { seq, log: `${base}.log`, meta: `${base}.meta`, src: `${base}.src`, sum: `${base}.sum` };
}

/** The segments present, oldest first. */
export function listSegments(dir: string): SegmentFiles[] {
  let names: string[];
  try { names = readdirSync(dir); } catch { return []; }
  const seqs = new Set<number>();
  for (const n of names) {
    const m = /^(\d{8})\.meta$/.exec(n);
    if (m) seqs.add(Number(m[1]));
  }
  return [...seqs].sort((a, b) => a - b).map((s) => segmentFiles(dir, s));
}

export function encodeMeta(buf: Buffer, at: number, time: number, offset: number, src: number,
  stream: LogStream): void {
  buf.writeDoubleLE(time, at);
  buf.writeUInt32LE(offset, at + 8);
  buf.writeUInt16LE(src, at + 12);
  buf.writeUInt8(stream === 'stderr' ? 1 : 0, at + 14);
  buf.writeUInt8(0, at + 15);
}

export const metaTime = (b: Buffer, i: number) => b.readDoubleLE(i * META_BYTES);
export const metaOffset = (b: Buffer, i: number) => b.readUInt32LE(i * META_BYTES + 8);
export const metaSource = (b: Buffer, i: number) => b.readUInt16LE(i * META_BYTES + 12);
export const metaStream = (b: Buffer, i: number): LogStream =>
  (b.readUInt8(i * META_BYTES + 14) === 1 ? 'stderr' : 'stdout');

/** The sources of a segment (a torn last line, mid-write, is left out). */
export function readSources(file: string): LogSource[] {
  let text: string;
  try { text = readFileSync(file, 'utf8'); } catch { return []; }
  const lines = text.split('\n');
  lines.pop();
  return lines.map((l) => JSON.parse(l) as LogSource);
}

/** Whole records in a meta file (a torn last record, mid-write, is left out); 0 when gone. */
export function metaRecordCount(file: string): number {
  try { return Math.floor(statSync(file).size / META_BYTES); } catch { return 0; }
}

/** The sealed summary, or undefined for the segment being written (or a damaged one). */
export function readSummary(file: string): SegmentSummary | undefined {
  try { return JSON.parse(readFileSync(file, 'utf8')) as SegmentSummary; } catch { return undefined; }
}

/** Time range of meta records [from, count). */
export function timeRange(meta: Buffer, from: number, count: number): { min: number; max: number } {
  let min = Infinity;
  let max = -Infinity;
  for (let i = from; i < count; i++) {
    const t = metaTime(meta, i);
    if (t < min) min = t;
    if (t > max) max = t;
  }
  return { min, max };
}

/** Bytes a segment's files take (0 for files already gone). */
export function segmentBytes(f: SegmentFiles): number {
  let n = 0;
  for (const p of [f.log, f.meta, f.src, f.sum]) {
    try { n += statSync(p).size; } catch { /* gone */ }
  }
  return n;
}
