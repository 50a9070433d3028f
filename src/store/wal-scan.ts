// Reading one WAL segment and classifying any damage (the rule is in README.md, "Recovery").
// Pure: bytes in, records and a verdict out; recover.ts decides what to do with them.
//
// What the framing can tell apart. A batch is one write (records, then its commit marker), so
// a write torn by a crash leaves a *prefix* of the batch: complete records, then at most one
// incomplete frame running to the end of the file (or, on file systems that extend a file
// before its data lands, zero bytes from a sector boundary on). Anything else is damage: a
// frame complete in length that fails its CRC or does not decode, a wrong marker count, or any
// complete frame *after* a bad one (a torn write has nothing after the tear). What the framing
// cannot tell: whether a torn batch had been acknowledged (a crash mid-write and a later cut of
// an acknowledged batch leave the same bytes), and a cut exactly at a frame boundary.
import { FRAME_HEADER, MAX_PAYLOAD, TYPE_COMMIT, TYPE_COMPACT, TYPE_DELETE, TYPE_PUT,
  decodeWalPayload, readFrame, type WalRecord } from './record-codec.js';
import { crc32 } from './crc32.js';

/** etcd's minimum sector size: a torn write ends at a multiple of it (decoder.go). */
const SECTOR = 512;

export interface ScannedRecord {
  readonly rec: WalRecord;
  readonly offset: number;
}

export interface Damage {
  /** First byte that cannot be kept (the bad frame's start). */
  readonly offset: number;
  readonly reason: string;
  /**
   * A torn final write: nothing complete follows and the bad frame is cut short by the end of
   * the file, or ends in zero-filled sectors, or is a final frame whose 9-byte payload can only
   * be a commit marker or a compaction (no data). Only the last segment can be torn.
   */
  readonly torn: boolean;
  /** Complete, CRC-valid frames found after the damage (their data would be lost). */
  readonly after: readonly ScannedRecord[];
  /** Bytes from `offset` to the end of the file. */
  readonly bytes: number;
}

export interface SegmentScan {
  /** Every valid frame before the damage (or the end), commit markers included, in order. */
  readonly records: readonly ScannedRecord[];
  /** Bytes worth keeping: `damage.offset`, or the file's length. */
  readonly end: number;
  /** Data records after the last commit marker (a batch whose marker is missing). */
  readonly unsealed: number;
  readonly damage: Damage | undefined;
}

/** Scans a segment; `isLast`: the segment being written (the only one a crash can tear). */
export function scanSegment(buf: Buffer, isLast: boolean): SegmentScan {
  const records: ScannedRecord[] = [];
  let off = 0;
  let unsealed = 0;
  let reason: string | undefined;
  while (off < buf.length) {
    const f = readFrame(buf, off);
    const rec = f.ok ? decodeWalPayload(f.payload) : undefined;
    if (!f.ok) {
      reason = f.reason === 'crc' ? 'CRC mismatch' :
        f.reason === 'short' ? 'record cut short by the end of the file' : 'invalid record length';
      break;
    }
    if (!rec) {
      reason = 'undecodable record';
      break;
    }
    if (rec.type === 'commit') {
      if (rec.revision !== unsealed) {
        reason = `commit marker counts ${rec.revision} records, the batch has ${unsealed}`;
        break;
      }
      unsealed = 0;
    } else {
      unsealed++;
    }
    records.push({ rec, offset: off });
    off = f.next;
  }
  if (reason === undefined) {
    if (isLast || unsealed === 0) return { records, end: buf.length, unsealed, damage: undefined };
    // A closed segment always ends with a marker: the writer only rotates between batches.
    reason = 'batch without commit marker in a closed segment';
    const last = records.findLastIndex((r) => r.rec.type === 'commit');
    const cut = last < 0 ? 0 : last + 1;
    const from = records[cut]!.offset;
    const after = records.slice(cut);
    return { records: records.slice(0, cut), end: from, unsealed: 0,
      damage: { offset: from, reason, torn: false, after, bytes: buf.length - from } };
  }
  const after = framesAfter(buf, off);
  const torn = isLast && after.length === 0 && (reason.startsWith('record cut short') ||
    isZeroFilledFrom(buf, off) || isFinalDatalessFrame(buf, off));
  return { records, end: off, unsealed,
    damage: { offset: off, reason, torn, after, bytes: buf.length - off } };
}

/**
 * Complete frames after a bad one at `bad`: first where its own length says the next frame
 * starts (a damaged payload leaves the length intact), else by searching byte by byte for a
 * frame whose CRC verifies and whose payload decodes.
 */
function framesAfter(buf: Buffer, bad: number): ScannedRecord[] {
  const out: ScannedRecord[] = [];
  const len = bad + 4 <= buf.length ? buf.readUInt32LE(bad) : 0;
  let p = len > 0 && len <= MAX_PAYLOAD && bad + FRAME_HEADER + len < buf.length &&
    validAt(buf, bad + FRAME_HEADER + len) ? bad + FRAME_HEADER + len : bad + 1;
  while (p + FRAME_HEADER < buf.length) {
    const rec = validAt(buf, p);
    if (!rec) {
      p++;
      continue;
    }
    out.push({ rec, offset: p });
    p += FRAME_HEADER + buf.readUInt32LE(p);
  }
  return out;
}

/** The record framed at `p` if its length is plausible, its CRC verifies and it decodes. */
function validAt(buf: Buffer, p: number): WalRecord | undefined {
  if (p + FRAME_HEADER + 9 > buf.length) return undefined;
  const len = buf.readUInt32LE(p);
  const type = buf[p + FRAME_HEADER];
  const known = type === TYPE_COMMIT || type === TYPE_COMPACT ? len === 9 :
    (type === TYPE_PUT || type === TYPE_DELETE) && len >= 13;
  if (!known || p + FRAME_HEADER + len > buf.length) return undefined;
  const payload = buf.subarray(p + FRAME_HEADER, p + FRAME_HEADER + len);
  if (crc32(payload) !== buf.readUInt32LE(p + 4)) return undefined;
  return decodeWalPayload(payload);
}

/** A bad frame ending the file whose length field says 9: a commit marker or a compaction. */
function isFinalDatalessFrame(buf: Buffer, bad: number): boolean {
  return bad + FRAME_HEADER + 9 === buf.length && buf.readUInt32LE(bad) === 9;
}

/**
 * True when the bad frame at `bad` is a write the file system extended but did not fill: from
 * `bad`, or from a sector boundary inside the frame, to the end of the file every byte is zero
 * (etcd's isTornEntry: a torn write leaves whole zeroed sectors).
 */
function isZeroFilledFrom(buf: Buffer, bad: number): boolean {
  let z = buf.length;
  while (z > bad && buf[z - 1] === 0) z--;
  if (z === buf.length) return false;
  if (z === bad) return true;
  const sector = Math.ceil(z / SECTOR) * SECTOR;
  const len = bad + 4 <= buf.length ? buf.readUInt32LE(bad) : 0;
  const frameEnd = bad + FRAME_HEADER + len;
  return sector < buf.length && sector < frameEnd;
}
