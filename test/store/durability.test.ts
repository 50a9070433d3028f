import { appendFile, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildEmbeddedStore } from '../../src/store/index.js';
import type { EmbeddedStoreOptions } from '../../src/store/index.js';
import type { StoreBackend } from '../../src/store/types.js';
import { tempDir } from './backends.js';
import { filesOf, frames, lastSegment } from './wal-files.js';

let dir: string;
const open = (o: Omit<EmbeddedStoreOptions, 'dataDir'> = {}) =>
  buildEmbeddedStore({ ...o, dataDir: dir });
const dump = async (s: StoreBackend) => (await s.list('')).items;

beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('embedded store durability', () => {
  it('reopening restores every key and the revision continues', async () => {
    const s = await open();
    for (let i = 0; i < 20; i++) await s.create(`/k/${i}`, JSON.stringify({ i, s: 'é✓' }));
    await s.update('/k/3', 'updated');
    await s.delete('/k/4');
    const before = await dump(s);
    await s.close();
    const r = await open();
    expect(await dump(r)).toEqual(before);
    expect(r.currentRevision()).toBe(23);
    expect((await r.create('/k/new', 'x')).modRevision).toBe(24);
    expect(await r.get('/k/3')).toMatchObject({ value: 'updated', version: 2, createRevision: 5 });
    await r.close();
  });

  it('1,000 concurrent creates are all acknowledged, share fsyncs, survive a reopen', async () => {
    const s = await open();
    const acked = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => s.create(`/registry/pods/ns/p${i}`, `{"i":${i}}`)),
    );
    expect(new Set(acked.map((kv) => kv.modRevision)).size).toBe(1000);
    const stats = s.stats().commits!;
    await s.close();
    const commits = (await frames(await lastSegment(dir))).filter((f) => f.type === 'B');
    expect(commits.length).toBeLessThan(100); // group commit: far fewer batches than writes
    expect(stats).toMatchObject({ batches: commits.length, records: 1000 });
    const r = await open();
    expect((await r.list('/registry/pods/')).items).toHaveLength(1000);
    expect(r.currentRevision()).toBe(1001);
    await r.close();
  });

  it('keeps the next segment created ahead (empty); rotations use it and replay is unchanged',
    async () => {
      const s = await open({ segmentBytes: 4096 });
      for (let i = 0; i < 60; i++) await s.create(`/k/${i}`, 'v'.repeat(200));
      const before = await dump(s);
      await s.close();
      const segs = await filesOf(dir, /^wal-.*\.log$/);
      expect(segs.length).toBeGreaterThan(3);
      const sizes = await Promise.all(segs.map(async (f) => (await readFile(f)).length));
      expect(sizes.at(-1)).toBe(0); // the spare
      expect(sizes.slice(0, -1).every((n) => n > 0)).toBe(true);
      const r = await open({ segmentBytes: 4096 });
      expect(await dump(r)).toEqual(before);
      await r.create('/k/after', 'y');
      await r.close();
      // Damage in a written segment that is not the last written one is still corruption.
      const written = (await filesOf(dir, /^wal-.*\.log$/)).filter((f) => f !== segs.at(-1));
      const first = written[0]!;
      await truncate(first, (await readFile(first)).length - 3);
      expect(await open().catch((e: unknown) => e)).toMatchObject({ code: 'KDP_STORE_CORRUPT' });
    });

  it('restarts without writes do not pile up spare segments', async () => {
    const s = await open();
    await s.create('/k/a', '1');
    await s.close();
    const before = await filesOf(dir, /^wal-.*\.log$/);
    for (let i = 0; i < 4; i++) await (await open()).close();
    expect(await filesOf(dir, /^wal-.*\.log$/)).toEqual(before);
    const r = await open();
    expect((await dump(r)).map((kv) => kv.key)).toEqual(['/k/a']);
    await r.close();
  });

  it('a torn last record (cut mid-record, garbage after) is discarded, and only it', async () => {
    const s = await open();
    for (let i = 0; i < 5; i++) await s.create(`/k/${i}`, 'x'.repeat(100));
    await s.close();
    const seg = await lastSegment(dir);
    const fs = await frames(seg);
    const lastRecord = fs[fs.length - 2]!; // the last put; its commit marker follows
    await truncate(seg, lastRecord.offset + 40);
    await appendFile(seg, Buffer.from('garbage!garbage!garbage!\x00\x01\x02\xff'));
    const r = await open();
    expect((await dump(r)).map((kv) => kv.key)).toEqual(['/k/0', '/k/1', '/k/2', '/k/3']);
    expect(r.currentRevision()).toBe(5);
    await r.create('/k/after', 'y');
    await r.close();
    const again = await open();
    expect((await dump(again)).map((kv) => kv.key)).toContain('/k/after');
    expect(again.currentRevision()).toBe(6);
    await again.close();
  });

  it('a corrupt record mid-WAL is KDP_STORE_CORRUPT naming file and offset', async () => {
    const s = await open();
    for (let i = 0; i < 5; i++) await s.create(`/k/${i}`, 'x'.repeat(100));
    await s.close();
    const seg = await lastSegment(dir);
    const second = (await frames(seg))[2]!; // put, commit, put, ...
    const buf = await readFile(seg);
    buf[second.offset + 60] ^= 0xff;
    await writeFile(seg, buf);
    const err = await open().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'KDP_STORE_CORRUPT' });
    expect((err as Error).message).toContain(seg);
    expect((err as Error).message).toContain(`offset ${second.offset}`);
  });

  it('snapshots prune old WAL segments; snapshot plus WAL replay to the same state', async () => {
    const s = await open({ snapshotEvery: 10, historyWindow: 1000 });
    for (let i = 0; i < 25; i++) await s.create(`/k/${String(i).padStart(2, '0')}`, `v${i}`);
    for (let i = 0; i < 25; i += 3) await s.update(`/k/${String(i).padStart(2, '0')}`, `u${i}`);
    for (let i = 1; i < 25; i += 4) await s.delete(`/k/${String(i).padStart(2, '0')}`);
    const before = await dump(s);
    const rev = s.currentRevision();
    await s.close();
    const snaps = await filesOf(dir, /\.snap$/);
    expect(snaps).toHaveLength(1);
    expect((await filesOf(dir, /^wal-/)).length).toBeLessThanOrEqual(2);
    const r = await open();
    expect(await dump(r)).toEqual(before);
    expect(r.currentRevision()).toBe(rev);
    const snapRev = parseInt(/snap-([0-9a-f]+)/.exec(snaps[0]!)![1]!, 16);
    expect(r.stats().compactedRevision).toBe(snapRev); // history restarts at the snapshot
    await r.close();
  });

  it('a snapshot of several MiB (many write chunks and syncs) restores every key', async () => {
    const s = await open({ snapshotEvery: 700 });
    const value = (i: number) => JSON.stringify({ i, pad: 'p'.repeat(4000 + (i % 97)) });
    for (let b = 0; b < 8; b++) {
      await Promise.all(Array.from({ length: 100 }, (_, j) =>
        s.create(`/k/${b * 100 + j}`, value(b * 100 + j))));
    }
    const before = await dump(s);
    await s.close();
    const [snap] = await filesOf(dir, /\.snap$/);
    expect((await readFile(snap!)).length).toBeGreaterThan(2.5 * 1024 * 1024);
    const r = await open();
    expect(await dump(r)).toEqual(before);
    expect((await r.get('/k/799'))!.value).toBe(value(799));
    await r.close();
  });

  it('a damaged snapshot is KDP_STORE_CORRUPT', async () => {
    const s = await open({ snapshotEvery: 5 });
    for (let i = 0; i < 6; i++) await s.create(`/k/${i}`, 'v'.repeat(50));
    await s.close();
    const [snap] = await filesOf(dir, /\.snap$/);
    const buf = await readFile(snap!);
    buf[buf.length - 40] ^= 0x55;
    await writeFile(snap!, buf);
    await expect(open()).rejects.toMatchObject({ code: 'KDP_STORE_CORRUPT' });
  });

  it('compaction is durable: the compacted revision survives a reopen', async () => {
    const s = await open();
    for (let i = 0; i < 6; i++) await s.create(`/k/${i}`, 'v');
    await s.compact(4);
    await s.close();
    const r = await open();
    expect(r.stats().compactedRevision).toBe(4);
    await expect(r.list('/k/', { revision: 3 })).rejects.toMatchObject({ code: 'KDP_GONE' });
    expect((await r.list('/k/', { revision: 5 })).items).toHaveLength(4);
    await r.close();
  });

  it('a data directory in use by a live store cannot be opened a second time', async () => {
    const s = await open();
    await expect(open()).rejects.toMatchObject({ code: 'KDP_STORE_LOCKED' });
    await s.create('/k/a', '1');
    await s.close();
    const r = await open();
    expect((await r.get('/k/a'))?.value).toBe('1');
    await r.close();
  });

  it('a reopened store keeps its WAL history for watches that resume', async () => {
    const s = await open();
    for (let i = 0; i < 4; i++) await s.create(`/k/${i}`, 'v');
    await s.close();
    const r = await open();
    const got: number[] = [];
    await new Promise<void>((resolve) => {
      r.watch('/k/', 3, {
        onEvents: (evs) => {
          got.push(...evs.map((e) => e.kv.modRevision));
          resolve();
        },
      });
    });
    expect(got).toEqual([4, 5]);
    await r.close();
  });
});
