// The WAL damage rule (src/store/README.md, "Recovery"): what a start-up keeps, drops, logs and
// keeps aside for each kind of damage, and what --repair (the `repair` option) changes.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEmbeddedStore } from '../../src/store/index.js';
import type { StoreBackend } from '../../src/store/types.js';
import { filesOf, frames, lastSegment } from './wal-files.js';

const NOW = new Date('2026-12-03T08:15:00.123Z');
const ASIDE = '.damaged-20261203T081500.123Z';

/** A data directory after: a (rev 2) alone, then b and c (revs 3, 4) in one batch. */
let template: { name: string; bytes: Buffer; frames: { offset: number; type: string }[] };
const scratch: string[] = [];

beforeAll(async () => {
  const dir = await fresh();
  const s = await buildEmbeddedStore({ dataDir: dir });
  await s.create('/k/a', 'A'.repeat(40));
  await Promise.all([s.create('/k/b', 'B'.repeat(40)), s.create('/k/c', 'C'.repeat(2000))]);
  await s.close();
  const seg = await lastSegment(dir);
  template = { name: basename(seg), bytes: await readFile(seg), frames: await frames(seg) };
  // put a | marker 1 | put b | put c | marker 2: the last batch holds two writes.
  expect(template.frames.map((f) => f.type).join('')).toBe('PBPPB');
});
afterAll(() => Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true }))));

async function fresh(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'kdp-wal-damage-'));
  scratch.push(d);
  return d;
}

/** A data directory whose only segment holds `bytes`. */
async function dirWith(bytes: Buffer): Promise<{ dir: string; seg: string }> {
  const dir = await fresh();
  const seg = join(dir, template.name);
  await writeFile(seg, bytes, { mode: 0o600 });
  return { dir, seg };
}

interface Opened {
  readonly store?: StoreBackend;
  readonly error?: Error & { code?: string };
  readonly log: string[];
}

async function open(dir: string, repair = false): Promise<Opened> {
  const log: string[] = [];
  try {
    const store = await buildEmbeddedStore({ dataDir: dir, repair, log: (l) => log.push(l) });
    return { store, log };
  } catch (e) {
    return { error: e as Error, log };
  }
}

async function keysAndRevision(s: StoreBackend): Promise<[string[], number]> {
  return [(await s.list('')).items.map((kv) => kv.key), s.currentRevision()];
}

/** Writes once more and reopens: the repaired segment must read back without any damage. */
async function writesAndReopensCleanly(dir: string, s: StoreBackend): Promise<void> {
  const rev = (await s.create('/k/after', 'z')).modRevision;
  await s.close();
  const again = await open(dir);
  expect(again.error).toBeUndefined();
  expect(again.log).toEqual([]);
  expect(again.store!.currentRevision()).toBe(rev);
  await again.store!.close();
}

const asideFiles = async (dir: string) =>
  (await readdir(dir)).filter((n) => n.includes('.damaged-')).sort();

describe('WAL tail cut by 1..N bytes', () => {
  const size = () => template.bytes.length;
  const putC = () => template.frames[3]!.offset;
  const marker2 = () => template.frames[4]!.offset;
  const putB = () => template.frames[2]!.offset;

  it('a torn or missing final commit marker: both writes of its batch are kept and sealed',
    async () => {
      for (let cut = 1; cut <= size() - marker2(); cut++) {
        const { dir, seg } = await dirWith(template.bytes.subarray(0, size() - cut));
        const o = await open(dir, false);
        expect(o.error, `cut ${cut}`).toBeUndefined();
        expect(await keysAndRevision(o.store!)).toEqual([['/k/a', '/k/b', '/k/c'], 4]);
        expect(o.log.at(-1)).toContain(`${template.name}: kept 2 complete records ` +
          '(revisions 3-4) of a batch whose commit marker was missing or torn');
        const torn = cut < size() - marker2();
        expect(o.log).toHaveLength(torn ? 2 : 1);
        if (torn) {
          expect(o.log[0]).toContain(`at offset ${marker2()}: dropped ${17 - cut} bytes ` +
            '(a torn final write, no complete record in them); kept revisions up to 4');
          const aside = await asideFiles(dir);
          expect(aside).toHaveLength(1);
          expect(await readFile(join(dir, aside[0]!)))
            .toEqual(template.bytes.subarray(0, size() - cut));
        } else {
          expect(await asideFiles(dir)).toEqual([]);
        }
        expect((await readFile(seg)).length).toBe(size()); // the marker rewritten
        await writesAndReopensCleanly(dir, o.store!);
      }
    });

  it('a torn last record: it alone is dropped (logged, kept aside), its batch-mate stays',
    async () => {
      for (let cut = size() - marker2() + 1; cut < size() - putC(); cut += 97) {
        const { dir } = await dirWith(template.bytes.subarray(0, size() - cut));
        const o = await open(dir);
        expect(o.error, `cut ${cut}`).toBeUndefined();
        expect(await keysAndRevision(o.store!)).toEqual([['/k/a', '/k/b'], 3]);
        expect(o.log[0]).toContain(`record cut short by the end of the file at offset ${putC()}`);
        expect(o.log[0]).toContain('kept revisions up to 3');
        expect(o.log[1]).toContain('kept 1 complete record (revision 3) of a batch');
        const aside = await asideFiles(dir);
        expect(aside).toHaveLength(1);
        expect(aside[0]!.startsWith(`${template.name}.damaged-`)).toBe(true);
        expect(aside[0]).toMatch(/\.damaged-\d{8}T\d{6}\.\d{3}Z$/);
        await writesAndReopensCleanly(dir, o.store!);
      }
    });

  it('a cut that tears the first record of the last batch leaves the earlier batch intact',
    async () => {
      const { dir } = await dirWith(template.bytes.subarray(0, putB() + 20));
      const o = await open(dir);
      expect(await keysAndRevision(o.store!)).toEqual([['/k/a'], 2]);
      expect(o.log).toHaveLength(1);
      expect(o.log[0]).toContain(`at offset ${putB()}: dropped 20 bytes`);
      await writesAndReopensCleanly(dir, o.store!);
    });

  it('any cut keeps exactly the complete records before it; a cut inside a frame is logged',
    async () => {
      const ends = template.frames.map((f, i) => template.frames[i + 1]?.offset ?? size());
      const keys = ['/k/a', null, '/k/b', '/k/c', null]; // per frame; null: a commit marker
      const cuts = new Set<number>();
      for (const f of template.frames) {
        for (const d of [0, 1, 4, 7, 8, 9, 12, 13, 20]) cuts.add(f.offset + d);
      }
      for (const e of ends) cuts.add(e - 1);
      for (const at of [...cuts].filter((c) => c > 0 && c < size()).sort((x, y) => x - y)) {
        const { dir } = await dirWith(template.bytes.subarray(0, at));
        const o = await open(dir);
        expect(o.error, `cut at ${at}`).toBeUndefined();
        const whole = ends.filter((e) => e <= at).length;
        const expected = keys.slice(0, whole).filter((k): k is string => k !== null);
        expect(await keysAndRevision(o.store!), `cut at ${at}`)
          .toEqual([expected, 1 + expected.length]);
        const inside = !ends.includes(at);
        expect((await asideFiles(dir)).length, `cut at ${at}`).toBe(inside ? 1 : 0);
        if (inside) expect(o.log[0]).toContain(`at offset ${template.frames[whole]!.offset}: `);
        await writesAndReopensCleanly(dir, o.store!);
      }
    });

  it('a write torn by a file system that zero-fills: the zeroed sectors are a torn write',
    async () => {
      const bytes = Buffer.from(template.bytes);
      const sector = Math.ceil((putC() + 100) / 512) * 512;
      expect(sector).toBeLessThan(marker2()); // inside put c (2 KB)
      bytes.fill(0, sector);
      const { dir } = await dirWith(bytes);
      const o = await open(dir);
      expect(o.error).toBeUndefined();
      expect(await keysAndRevision(o.store!)).toEqual([['/k/a', '/k/b'], 3]);
      expect(o.log[0]).toContain(`CRC mismatch at offset ${putC()}`);
      expect(o.log[0]).toContain('a torn final write');
      await writesAndReopensCleanly(dir, o.store!);
    });
});

describe('damage that is not a torn final write refuses to start without --repair', () => {
  /** Opens without repair (refused, nothing changed), then with it. */
  async function refusedThenRepaired(bytes: Buffer, offset: number) {
    const { dir, seg } = await dirWith(bytes);
    const refused = await open(dir);
    expect(refused.error?.code).toBe('KDP_STORE_CORRUPT');
    expect(refused.error?.message).toContain(`${seg}: corrupt record at offset ${offset}`);
    expect(refused.error?.message).toContain('Run with --repair');
    expect(refused.log).toEqual([]);
    expect(await readFile(seg)).toEqual(bytes); // nothing changed
    expect(await asideFiles(dir)).toEqual([]);
    const repaired = await open(dir, true);
    expect(repaired.error).toBeUndefined();
    const aside = await asideFiles(dir);
    expect(aside).toHaveLength(1);
    expect(await readFile(join(dir, aside[0]!))).toEqual(bytes);
    return { dir, seg, refused, repaired };
  }

  it('a flipped byte in the middle of the last record (its commit marker follows)', async () => {
    const bytes = Buffer.from(template.bytes);
    const putC = template.frames[3]!.offset;
    bytes[putC + 1000] ^= 0x20;
    const r = await refusedThenRepaired(bytes, putC);
    expect(r.refused.error!.message).toContain('CRC mismatch; no complete data record and 1 ' +
      'commit marker(s) follow it, so it is not a torn final write');
    expect(await keysAndRevision(r.repaired.store!)).toEqual([['/k/a', '/k/b'], 3]);
    expect(r.repaired.log[0]).toContain(`CRC mismatch at offset ${putC}: dropped ` +
      `${bytes.length - putC} bytes (the bad record and no complete data record after it ` +
      '(--repair)); kept revisions up to 3');
    await writesAndReopensCleanly(r.dir, r.repaired.store!);
  });

  it('a flipped byte in a record that is not the last one', async () => {
    const bytes = Buffer.from(template.bytes);
    bytes[20] ^= 0x01; // inside put a
    const r = await refusedThenRepaired(bytes, 0);
    expect(r.refused.error!.message).toContain('2 complete records (revisions 3-4) and 2 ' +
      'commit marker(s) follow it');
    expect(r.refused.error!.message).toContain('revisions up to 1 are intact');
    expect(await keysAndRevision(r.repaired.store!)).toEqual([[], 1]);
    expect(r.repaired.log[0]).toContain('the bad record and 2 complete records ' +
      '(revisions 3-4) after it');
    await writesAndReopensCleanly(r.dir, r.repaired.store!);
  });

  it('a complete record after one whose length field is damaged (framing lost)', async () => {
    const bytes = Buffer.from(template.bytes);
    const putB = template.frames[2]!.offset;
    bytes.writeUInt32LE(bytes.length, putB); // now claims to run past the end of the file
    const r = await refusedThenRepaired(bytes, putB);
    expect(r.refused.error!.message).toContain('record cut short by the end of the file; ' +
      '1 complete record (revision 4) and 1 commit marker(s) follow it');
    expect(await keysAndRevision(r.repaired.store!)).toEqual([['/k/a'], 2]);
    await writesAndReopensCleanly(r.dir, r.repaired.store!);
  });

  it('damage in an older segment: --repair moves the later segments aside', async () => {
    const dir = await fresh();
    const s = await buildEmbeddedStore({ dataDir: dir, segmentBytes: 600 });
    for (let i = 10; i < 22; i++) await s.create(`/k/${i}`, 'v'.repeat(200));
    await s.close();
    const segs = (await filesOf(dir, /^wal-.*\.log$/)).slice(0, -1); // minus the empty spare
    expect(segs.length).toBeGreaterThan(3);
    const bytes = await readFile(segs[1]!);
    bytes[30] ^= 0xff;
    await writeFile(segs[1]!, bytes, { mode: 0o600 });
    const refused = await open(dir);
    expect(refused.error?.code).toBe('KDP_STORE_CORRUPT');
    expect(refused.error?.message).toContain(`${segs[1]}: corrupt record at offset 0`);
    const repaired = await open(dir, true);
    const [keys, rev] = await keysAndRevision(repaired.store!);
    const firstSegRecords = (await frames(segs[0]!)).filter((f) => f.type === 'P').length;
    expect(rev).toBe(1 + firstSegRecords);
    expect(keys).toHaveLength(firstSegRecords);
    expect(repaired.log).toHaveLength(segs.length - 1);
    for (const later of segs.slice(2)) {
      expect(repaired.log.join('\n')).toContain(`${basename(later)}: after the damage: dropped`);
    }
    expect((await asideFiles(dir)).length).toBe(segs.length - 1);
    await writesAndReopensCleanly(dir, repaired.store!);
  });
});

describe('repair only drops what it must', () => {
  it('--repair on an undamaged WAL changes nothing and logs nothing', async () => {
    const { dir, seg } = await dirWith(template.bytes);
    const o = await open(dir, true);
    expect(o.log).toEqual([]);
    expect(await keysAndRevision(o.store!)).toEqual([['/k/a', '/k/b', '/k/c'], 4]);
    await o.store!.close();
    expect(await readFile(seg)).toEqual(template.bytes);
  });

  it('the kept-aside name is <segment>.damaged-<UTC time>', async () => {
    const { asidePath } = await import('../../src/store/wal-repair.js');
    expect(asidePath('/d/wal-0000000000000001.log', NOW))
      .toBe(`/d/wal-0000000000000001.log${ASIDE}`);
  });
});
