// Helpers that inspect and damage a data directory's files the way a crash or a bad disk would.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readFrame } from '../../src/store/record-codec.js';

export async function filesOf(dir: string, re: RegExp): Promise<string[]> {
  return (await readdir(dir)).filter((n) => re.test(n)).sort().map((n) => join(dir, n));
}

/** The segment being written: the last one with bytes (the writer keeps an empty spare). */
export async function lastSegment(dir: string): Promise<string> {
  const segs = await filesOf(dir, /^wal-.*\.log$/);
  while (segs.length > 1 && (await stat(segs.at(-1)!)).size === 0) segs.pop();
  return segs.at(-1)!;
}

/** Start offsets and payload types of every frame of a file (stops at the first bad one). */
export async function frames(path: string): Promise<{ offset: number; type: string }[]> {
  const buf = await readFile(path);
  const out: { offset: number; type: string }[] = [];
  for (let off = 0; off < buf.length; ) {
    const f = readFrame(buf, off);
    if (!f.ok) break;
    out.push({ offset: off, type: String.fromCharCode(f.payload[0]!) });
    off = f.next;
  }
  return out;
}
