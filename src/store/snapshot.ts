// Snapshots: the whole key space at one revision, framed like the WAL:
//   header (revision, compactedRevision, count) | dictionary | one record per key | trailer
// Values are in the store's packed in-memory form (value-codec.ts), with the dictionary that
// packed them in the snapshot itself: writing needs no unpacking, and a start-up with the same
// dictionary none either; another dictionary repacks. A snapshot without a dictionary record
// (older files) holds plain values. Written to `snap-<rev>.tmp`, fsynced, renamed to
// `snap-<rev>.snap`, directory fsynced: never partially visible, so any damage is corruption.
import { open, readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoredKV } from './events.js';
import { ValueCodec } from './value-codec.js';
import { readFrame, sealFrame, FRAME_HEADER } from './record-codec.js';
import { corrupt, syncDir } from './wal.js';
import { openPrivate } from '../util/private-files.js';

const SNAP_RE = /^snap-([0-9a-f]{16})\.(snap|tmp)$/;
const T_HEADER = 0x48; // 'H'
const T_DICT = 0x54; // 'T'
const T_KEY = 0x4b; // 'K'
const T_END = 0x45; // 'E'
const CHUNK = 1 << 20;
/** Bytes encoded between writes: each chunk is one stretch of the event loop (~1-2 ms). */
const WRITE_CHUNK = 256 << 10;
/** Bytes written between fdatasyncs: on ext4 (data=ordered) a WAL fsync waits for the dirty
 *  data of other files in its journal transaction, so the snapshot never leaves much behind. */
const SYNC_EVERY = 1 << 20;

export interface SnapshotInfo {
  readonly revision: number;
  readonly compactedRevision: number;
  readonly path: string;
}

function snapPath(dir: string, revision: number, ext: 'snap' | 'tmp'): string {
  return join(dir, `snap-${revision.toString(16).padStart(16, '0')}.${ext}`);
}

function numbersPayload(type: number, nums: readonly number[]) {
  return {
    size: 1 + 8 * nums.length,
    fill(b: Buffer, at: number) {
      b[at] = type;
      nums.forEach((n, i) => b.writeDoubleLE(n, at + 1 + 8 * i));
    },
  };
}

function dictPayload(tokens: readonly string[]) {
  const text = JSON.stringify(tokens);
  const size = 1 + Buffer.byteLength(text);
  return { size, fill(b: Buffer, at: number) { b[at] = T_DICT; b.write(text, at + 1, 'utf8'); } };
}

function kvPayload(kv: StoredKV) {
  const keyLen = Buffer.byteLength(kv.key);
  const value = kv.packed;
  return {
    size: 29 + keyLen + Buffer.byteLength(value),
    fill(b: Buffer, at: number) {
      b[at] = T_KEY;
      b.writeDoubleLE(kv.createRevision, at + 1);
      b.writeDoubleLE(kv.modRevision, at + 9);
      b.writeDoubleLE(kv.version, at + 17);
      b.writeUInt32LE(keyLen, at + 25);
      b.write(kv.key, at + 29, keyLen, 'utf8');
      b.write(value, at + 29 + keyLen, 'utf8');
    },
  };
}

/** Writes a snapshot of `kvs` (the state at `revision`) durably; returns its size in bytes. */
export async function writeSnapshot(
  dir: string, revision: number, compactedRevision: number, kvs: readonly StoredKV[],
  fsync: boolean, codec: ValueCodec,
): Promise<number> {
  const tmp = snapPath(dir, revision, 'tmp');
  const fh = await openPrivate(tmp, 'w');
  let buf = Buffer.allocUnsafeSlow(WRITE_CHUNK);
  let used = 0;
  let total = 0;
  let unsynced = 0;
  const flush = async () => {
    await fh.write(buf, 0, used);
    total += used;
    unsynced += used;
    used = 0;
    // Sync as we go: a big write-back would stall the WAL's fdatasyncs behind it.
    if (fsync && unsynced >= SYNC_EVERY) {
      await fh.datasync();
      unsynced = 0;
    }
  };
  const put = async (p: { size: number; fill: (b: Buffer, at: number) => void }) => {
    const need = FRAME_HEADER + p.size;
    // Bounded by WRITE_CHUNK, not buf.length: a buffer grown for one big value stays grown.
    if (used > 0 && used + need > WRITE_CHUNK) await flush();
    if (used + need > buf.length) buf = Buffer.allocUnsafeSlow(need); // here used === 0
    used = sealFrame(buf, used, p.size, p.fill);
  };
  try {
    await put(numbersPayload(T_HEADER, [revision, compactedRevision, kvs.length]));
    await put(dictPayload(codec.tokens));
    for (const kv of kvs) await put(kvPayload(kv));
    await put(numbersPayload(T_END, [kvs.length]));
    await flush();
    if (fsync) await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, snapPath(dir, revision, 'snap'));
  if (fsync) await syncDir(dir);
  return total;
}

/** Snapshot files in `dir`, oldest first; leftover `.tmp` files are removed. */
export async function listSnapshots(dir: string): Promise<SnapshotInfo[]> {
  const out: SnapshotInfo[] = [];
  for (const name of await readdir(dir)) {
    const m = SNAP_RE.exec(name);
    if (!m) continue;
    if (m[2] === 'tmp') await unlink(join(dir, name));
    else out.push({ revision: parseInt(m[1]!, 16), compactedRevision: 0, path: join(dir, name) });
  }
  return out.sort((a, b) => a.revision - b.revision);
}

interface LoadState {
  header: SnapshotInfo | undefined;
  seen: number;
  ended: boolean;
  /** Turns a value as stored into `codec`'s packed form (set by the dictionary record). */
  repack: (stored: string) => string;
}

/** Streams a snapshot file, calling `onKv` per key (packed by `codec`); returns its header. */
export async function loadSnapshot(
  path: string, codec: ValueCodec, onKv: (kv: StoredKV) => void,
): Promise<SnapshotInfo> {
  const fh = await open(path, 'r');
  const state: LoadState = { header: undefined, seen: 0, ended: false,
    repack: (plain) => codec.pack(plain) };
  let buf = Buffer.allocUnsafeSlow(2 * CHUNK);
  let start = 0; // first unparsed byte in buf
  let end = 0; // end of data in buf
  let base = 0; // file offset of buf[0]
  try {
    for (;;) {
      if (start > 0) {
        buf.copy(buf, 0, start, end);
        base += start;
        end -= start;
        start = 0;
      }
      if (end === buf.length) buf = Buffer.concat([buf, Buffer.allocUnsafeSlow(buf.length)]);
      const { bytesRead } = await fh.read(buf, end, buf.length - end, null);
      end += bytesRead;
      const view = buf.subarray(0, end);
      for (;;) {
        const f = readFrame(view, start);
        if (!f.ok) {
          if (f.reason === 'short' && bytesRead > 0) break;
          if (start === end && state.ended) return state.header!;
          throw corrupt(path, base + start, f.reason === 'short' ? 'truncated' : f.reason);
        }
        snapshotRecord(f.payload, state, path, base + start, codec, onKv);
        start = f.next;
      }
    }
  } finally {
    await fh.close();
  }
}

function snapshotRecord(
  p: Buffer, st: LoadState, path: string, offset: number, codec: ValueCodec,
  onKv: (kv: StoredKV) => void,
): void {
  if (st.ended) throw corrupt(path, offset, 'data after trailer');
  if (st.header === undefined) {
    if (p[0] !== T_HEADER || p.length !== 25) throw corrupt(path, offset, 'no header');
    st.header = { revision: p.readDoubleLE(1), compactedRevision: p.readDoubleLE(9), path };
  } else if (p[0] === T_DICT && st.seen === 0) {
    st.repack = repacker(readDictionary(p, path, offset), codec);
  } else if (p[0] === T_KEY && p.length >= 29) {
    onKv(decodeKv(p, st.repack));
    st.seen++;
  } else if (p[0] === T_END && p.length === 9 && p.readDoubleLE(1) === st.seen) {
    st.ended = true;
  } else {
    throw corrupt(path, offset, 'unexpected record');
  }
}

function readDictionary(p: Buffer, path: string, offset: number): string[] {
  let tokens: unknown;
  try {
    tokens = JSON.parse(p.toString('utf8', 1));
  } catch {
    tokens = undefined;
  }
  if (!Array.isArray(tokens) || !tokens.every((t) => typeof t === 'string')) {
    throw corrupt(path, offset, 'bad dictionary');
  }
  return tokens as string[];
}

function repacker(tokens: readonly string[], codec: ValueCodec): (stored: string) => string {
  if (codec.hasDictionary(tokens)) return (stored) => stored;
  const from = new ValueCodec(tokens);
  return (stored) => codec.pack(from.unpack(stored));
}

function decodeKv(p: Buffer, repack: (stored: string) => string): StoredKV {
  const keyLen = p.readUInt32LE(25);
  return {
    key: p.toString('utf8', 29, 29 + keyLen),
    packed: repack(p.toString('utf8', 29 + keyLen)),
    createRevision: p.readDoubleLE(1),
    modRevision: p.readDoubleLE(9),
    version: p.readDoubleLE(17),
  };
}
