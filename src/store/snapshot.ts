// Snapshots: the whole key space at one revision, framed like the WAL:
//   header (revision, compactedRevision, count) | one record per key | trailer (count)
// written to `snap-<rev>.tmp`, fsynced, renamed to `snap-<rev>.snap`, directory fsynced. A
// snapshot is never partially visible, so any damage in one is corruption.
import { open, readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { KeyValue } from './types.js';
import { buildFrame, readFrame } from './record-codec.js';
import { corrupt, syncDir } from './wal.js';

const SNAP_RE = /^snap-([0-9a-f]{16})\.(snap|tmp)$/;
const T_HEADER = 0x48; // 'H'
const T_KEY = 0x4b; // 'K'
const T_END = 0x45; // 'E'
const CHUNK = 1 << 20;

export interface SnapshotInfo {
  readonly revision: number;
  readonly compactedRevision: number;
  readonly path: string;
}

function snapPath(dir: string, revision: number, ext: 'snap' | 'tmp'): string {
  return join(dir, `snap-${revision.toString(16).padStart(16, '0')}.${ext}`);
}

function numbersFrame(type: number, nums: readonly number[]): Buffer {
  return buildFrame(1 + 8 * nums.length, (b, at) => {
    b[at] = type;
    nums.forEach((n, i) => b.writeDoubleLE(n, at + 1 + 8 * i));
  });
}

function kvFrame(kv: KeyValue): Buffer {
  const keyLen = Buffer.byteLength(kv.key);
  const valueLen = Buffer.byteLength(kv.value);
  return buildFrame(29 + keyLen + valueLen, (b, at) => {
    b[at] = T_KEY;
    b.writeDoubleLE(kv.createRevision, at + 1);
    b.writeDoubleLE(kv.modRevision, at + 9);
    b.writeDoubleLE(kv.version, at + 17);
    b.writeUInt32LE(keyLen, at + 25);
    b.write(kv.key, at + 29, keyLen, 'utf8');
    b.write(kv.value, at + 29 + keyLen, valueLen, 'utf8');
  });
}

/** Writes a snapshot of `kvs` (the state at `revision`) durably; returns its size in bytes. */
export async function writeSnapshot(
  dir: string, revision: number, compactedRevision: number, kvs: readonly KeyValue[],
  fsync: boolean,
): Promise<number> {
  const tmp = snapPath(dir, revision, 'tmp');
  const fh = await open(tmp, 'w');
  let total = 0;
  try {
    let parts: Buffer[] = [numbersFrame(T_HEADER, [revision, compactedRevision, kvs.length])];
    let size = parts[0]!.length;
    for (const kv of kvs) {
      const f = kvFrame(kv);
      parts.push(f);
      size += f.length;
      if (size >= CHUNK) {
        total += size;
        await fh.write(Buffer.concat(parts));
        parts = [];
        size = 0;
      }
    }
    parts.push(numbersFrame(T_END, [kvs.length]));
    const last = Buffer.concat(parts);
    total += last.length;
    await fh.write(last);
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

/** Streams a snapshot file, calling `onKv` per key; returns its header. */
export async function loadSnapshot(
  path: string, onKv: (kv: KeyValue) => void,
): Promise<SnapshotInfo> {
  const fh = await open(path, 'r');
  let header: SnapshotInfo | undefined;
  let seen = 0;
  let ended = false;
  let carry = Buffer.alloc(0);
  let base = 0; // file offset of carry[0]
  try {
    for (;;) {
      const chunk = Buffer.allocUnsafe(CHUNK);
      const { bytesRead } = await fh.read(chunk, 0, CHUNK, null);
      const buf = bytesRead === 0 ? carry : Buffer.concat([carry, chunk.subarray(0, bytesRead)]);
      let off = 0;
      for (;;) {
        const f = readFrame(buf, off);
        if (!f.ok) {
          if (f.reason !== 'short' || bytesRead === 0) {
            if (off === buf.length && ended) return header!;
            throw corrupt(path, base + off, f.reason === 'short' ? 'truncated' : f.reason);
          }
          break;
        }
        if (ended) throw corrupt(path, base + off, 'data after trailer');
        const p = f.payload;
        if (header === undefined) {
          if (p[0] !== T_HEADER || p.length !== 25) throw corrupt(path, base + off, 'no header');
          header = { revision: p.readDoubleLE(1), compactedRevision: p.readDoubleLE(9), path };
        } else if (p[0] === T_KEY && p.length >= 29) {
          onKv(decodeKv(p));
          seen++;
        } else if (p[0] === T_END && p.length === 9 && p.readDoubleLE(1) === seen) {
          ended = true;
        } else {
          throw corrupt(path, base + off, 'unexpected record');
        }
        off = f.next;
      }
      carry = buf.subarray(off);
      base += off;
    }
  } finally {
    await fh.close();
  }
}

function decodeKv(p: Buffer): KeyValue {
  const keyLen = p.readUInt32LE(25);
  return {
    key: p.toString('utf8', 29, 29 + keyLen),
    value: p.toString('utf8', 29 + keyLen),
    createRevision: p.readDoubleLE(1),
    modRevision: p.readDoubleLE(9),
    version: p.readDoubleLE(17),
  };
}
