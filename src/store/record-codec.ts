// Framing shared by WAL segments and snapshots: every record is
//   u32le payloadLength | u32le crc32(payload) | payload
// so a reader can tell a complete record from a torn or corrupted one.
// WAL payloads: u8 type | f64le revision | (u32le keyLength | key utf8 | value utf8).
import { crc32 } from './crc32.js';

export const FRAME_HEADER = 8;
/** Upper bound on one payload; larger length fields are treated as corruption. */
export const MAX_PAYLOAD = 64 * 1024 * 1024;

export const TYPE_PUT = 0x50; // 'P'
export const TYPE_DELETE = 0x44; // 'D'
export const TYPE_COMPACT = 0x43; // 'C'
/** Ends every group-commit batch (recovery: wal-scan.ts; a missing one is written back). */
export const TYPE_COMMIT = 0x42; // 'B'

export type WalRecord =
  | {
      readonly type: 'put'; readonly revision: number; readonly key: string;
      readonly value: string;
    }
  | { readonly type: 'delete'; readonly revision: number; readonly key: string }
  | { readonly type: 'compact'; readonly revision: number }
  /** `revision` holds the number of records in the batch this marker closes. */
  | { readonly type: 'commit'; readonly revision: number };

/** Allocates a frame with room for `payloadSize` bytes; `fill` writes the payload at offset 8. */
export function buildFrame(payloadSize: number, fill: (buf: Buffer, at: number) => void): Buffer {
  const buf = Buffer.allocUnsafe(FRAME_HEADER + payloadSize);
  sealFrame(buf, 0, payloadSize, fill);
  return buf;
}

/** Writes a frame at `at` of `buf` (which has room); returns the offset after it. */
export function sealFrame(
  buf: Buffer, at: number, payloadSize: number, fill: (buf: Buffer, at: number) => void,
): number {
  const start = at + FRAME_HEADER;
  fill(buf, start);
  buf.writeUInt32LE(payloadSize, at);
  buf.writeUInt32LE(crc32(buf.subarray(start, start + payloadSize)), at + 4);
  return start + payloadSize;
}

function payloadSize(rec: WalRecord): number {
  if (rec.type === 'compact' || rec.type === 'commit') return 9;
  const valueLen = rec.type === 'put' ? Buffer.byteLength(rec.value) : 0;
  return 13 + Buffer.byteLength(rec.key) + valueLen;
}

/** Bytes the framed record takes. */
export function walFrameSize(rec: WalRecord): number {
  return FRAME_HEADER + payloadSize(rec);
}

/** Encodes `rec` as a frame at `at` of `buf` (room checked by the caller); returns the end. */
export function writeWalFrame(buf: Buffer, at: number, rec: WalRecord): number {
  return sealFrame(buf, at, payloadSize(rec), (b, p) => {
    b[p] = TYPE_OF[rec.type];
    b.writeDoubleLE(rec.revision, p + 1);
    if (rec.type !== 'put' && rec.type !== 'delete') return;
    const keyLen = b.write(rec.key, p + 13, 'utf8');
    b.writeUInt32LE(keyLen, p + 9);
    if (rec.type === 'put') b.write(rec.value, p + 13 + keyLen, 'utf8');
  });
}

const TYPE_OF = { put: TYPE_PUT, delete: TYPE_DELETE, compact: TYPE_COMPACT, commit: TYPE_COMMIT };

/** One record as its own frame (tests and tools; the WAL writes into a reused buffer). */
export function encodeWalRecord(rec: WalRecord): Buffer {
  const buf = Buffer.allocUnsafe(walFrameSize(rec));
  writeWalFrame(buf, 0, rec);
  return buf;
}

/** Decodes one WAL payload; undefined when its structure is invalid. */
export function decodeWalPayload(p: Buffer): WalRecord | undefined {
  if (p.length < 9) return undefined;
  const type = p[0];
  const revision = p.readDoubleLE(1);
  if (!Number.isSafeInteger(revision) || revision < 0) return undefined;
  if (type === TYPE_COMPACT) return p.length === 9 ? { type: 'compact', revision } : undefined;
  if (type === TYPE_COMMIT) return p.length === 9 ? { type: 'commit', revision } : undefined;
  if (type !== TYPE_PUT && type !== TYPE_DELETE) return undefined;
  if (p.length < 13) return undefined;
  const keyLen = p.readUInt32LE(9);
  if (13 + keyLen > p.length) return undefined;
  const key = p.toString('utf8', 13, 13 + keyLen);
  if (type === TYPE_DELETE) {
    return p.length === 13 + keyLen ? { type: 'delete', revision, key } : undefined;
  }
  return { type: 'put', revision, key, value: p.toString('utf8', 13 + keyLen) };
}

export type FrameRead =
  | { readonly ok: true; readonly payload: Buffer; readonly next: number }
  | { readonly ok: false; readonly reason: 'short' | 'length' | 'crc' };

/** Reads the frame at `offset` of `buf` (which ends at `buf.length`). */
export function readFrame(buf: Buffer, offset: number): FrameRead {
  if (offset + FRAME_HEADER > buf.length) return { ok: false, reason: 'short' };
  const len = buf.readUInt32LE(offset);
  if (len === 0 || len > MAX_PAYLOAD) return { ok: false, reason: 'length' };
  const end = offset + FRAME_HEADER + len;
  if (end > buf.length) return { ok: false, reason: 'short' };
  const payload = buf.subarray(offset + FRAME_HEADER, end);
  if (crc32(payload) !== buf.readUInt32LE(offset + 4)) return { ok: false, reason: 'crc' };
  return { ok: true, payload, next: end };
}
