// The changes recovery makes to damaged WAL segments, each durable before the next: a copy of
// the segment is kept aside (`<segment>.damaged-<UTC time>`, 0600, never overwritten) before
// it is truncated; later segments are renamed aside, not deleted; a batch whose commit marker
// is missing is sealed with one, so that every batch on disk ends with its marker again.
import { constants } from 'node:fs';
import { copyFile, readFile, rename, truncate } from 'node:fs/promises';
import { openPrivate, PRIVATE_FILE_MODE } from '../util/private-files.js';
import { encodeWalRecord, type WalRecord } from './record-codec.js';
import { scanSegment, type ScannedRecord } from './wal-scan.js';

/** `<path>.damaged-20261203T081500.123Z`: sorts by time, never matches a segment name. */
export function asidePath(path: string, now: Date): string {
  return `${path}.damaged-${now.toISOString().replace(/[-:]/g, '')}`;
}

/** Copies `path` aside (durably) and returns the copy's path. */
export async function keepAside(path: string, now: Date): Promise<string> {
  const to = asidePath(path, now);
  await copyFile(path, to, constants.COPYFILE_EXCL);
  const fh = await openPrivate(to, 'r+');
  try {
    await fh.chmod(PRIVATE_FILE_MODE);
    await fh.sync();
  } finally {
    await fh.close();
  }
  return to;
}

/** Renames `path` aside; returns the new path (the directory is synced by the caller). */
export async function moveAside(path: string, now: Date): Promise<string> {
  const to = asidePath(path, now);
  await rename(path, to);
  return to;
}

/** Cuts `path` to `length` bytes, durably. */
export async function truncateDurably(path: string, length: number): Promise<void> {
  await truncate(path, length);
  const fh = await openPrivate(path, 'r+');
  try {
    await fh.datasync();
  } finally {
    await fh.close();
  }
}

/** Appends the commit marker closing a batch of `count` records to `path`, durably. */
export async function sealBatch(path: string, count: number): Promise<void> {
  const marker: WalRecord = { type: 'commit', revision: count };
  const fh = await openPrivate(path, 'a');
  try {
    await fh.write(encodeWalRecord(marker));
    await fh.datasync();
  } finally {
    await fh.close();
  }
}

/** The valid records of a segment that is being set aside (for the log line). */
export async function recordsOf(path: string): Promise<readonly ScannedRecord[]> {
  return scanSegment(await readFile(path), false).records;
}

/** "3 records (revisions 41-42, 45)": data records and their revisions, as ranges. */
export function describeRecords(recs: readonly ScannedRecord[]): string {
  const revs = recs.filter((r) => r.rec.type === 'put' || r.rec.type === 'delete')
    .map((r) => r.rec.revision);
  if (revs.length === 0) return 'no complete data record';
  const ranges: string[] = [];
  for (let i = 0; i < revs.length; ) {
    let j = i;
    while (j + 1 < revs.length && revs[j + 1] === revs[j]! + 1) j++;
    ranges.push(i === j ? `${revs[i]}` : `${revs[i]}-${revs[j]}`);
    i = j + 1;
  }
  const n = revs.length;
  return `${n} complete record${n === 1 ? '' : 's'} (revision${n === 1 ? '' : 's'} ` +
    `${ranges.join(', ')})`;
}
