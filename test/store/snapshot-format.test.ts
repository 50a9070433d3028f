import { readFile, rm, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredKV } from '../../src/store/events.js';
import { readFrame } from '../../src/store/record-codec.js';
import { loadSnapshot, writeSnapshot } from '../../src/store/snapshot.js';
import { ValueCodec } from '../../src/store/value-codec.js';
import { tempDir } from './backends.js';
import { filesOf } from './wal-files.js';

const VALUES = ['{"metadata":{"name":"a","labels":{"app":"web"}}}', '\u0000raw\u0001', '',
  '{"kind":"Pod","metadata":{"name":"\u00e9\u4e2d"}}'];

function storedBy(codec: ValueCodec): StoredKV[] {
  return VALUES.map((v, i) => ({ key: `/k/${i}`, packed: codec.pack(v), createRevision: i + 2,
    modRevision: i + 2, version: 1 }));
}

async function load(path: string, codec: ValueCodec): Promise<StoredKV[]> {
  const out: StoredKV[] = [];
  await loadSnapshot(path, codec, (kv) => out.push(kv));
  return out;
}

describe('snapshot values and their dictionary', () => {
  let dir: string;
  beforeEach(async () => { dir = await tempDir(); });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('a snapshot keeps values packed and loads them unchanged with the same dictionary',
    async () => {
      const codec = new ValueCodec();
      const kvs = storedBy(codec);
      await writeSnapshot(dir, 9, 0, kvs, false, codec);
      const [snap] = await filesOf(dir, /\.snap$/);
      expect(await load(snap!, codec)).toEqual(kvs);
    });

  it('a value bigger than one write chunk, between small ones, loads back intact', async () => {
    const codec = new ValueCodec();
    const big = JSON.stringify({ pad: 'b'.repeat(600 * 1024) });
    const kvs = ['small-a', big, 'small-b', big].map((v, i) => ({ key: `/k/${i}`,
      packed: codec.pack(v), createRevision: i + 2, modRevision: i + 2, version: 1 }));
    await writeSnapshot(dir, 9, 0, kvs, true, codec);
    const [snap] = await filesOf(dir, /\.snap$/);
    expect(await load(snap!, codec)).toEqual(kvs);
  });

  it('a snapshot packed with another dictionary is repacked to the current one', async () => {
    const old = new ValueCodec(['"metadata":{', '"name":"', 'web']);
    await writeSnapshot(dir, 9, 0, storedBy(old), false, old);
    const [snap] = await filesOf(dir, /\.snap$/);
    const now = new ValueCodec();
    const loaded = await load(snap!, now);
    expect(loaded.map((kv) => now.unpack(kv.packed))).toEqual(VALUES);
    expect(loaded.map((kv) => kv.packed)).toEqual(VALUES.map((v) => now.pack(v)));
  });

  it('a snapshot without a dictionary record (plain values) still loads', async () => {
    await writeSnapshot(dir, 9, 0, storedBy(new ValueCodec([])), false, new ValueCodec([]));
    const [snap] = await filesOf(dir, /\.snap$/);
    const buf = await readFile(snap!);
    const header = readFrame(buf, 0);
    const dict = header.ok ? readFrame(buf, header.next) : header;
    if (!header.ok || !dict.ok) throw new Error('unexpected snapshot layout');
    expect(dict.payload[0]).toBe(0x54);
    await writeFile(snap!, Buffer.concat([buf.subarray(0, header.next), buf.subarray(dict.next)]));
    const now = new ValueCodec();
    expect((await load(snap!, now)).map((kv) => now.unpack(kv.packed))).toEqual(VALUES);
  });

  it('a damaged dictionary is KDP_STORE_CORRUPT', async () => {
    const codec = new ValueCodec(['"name":"']);
    await writeSnapshot(dir, 9, 0, storedBy(codec), false, codec);
    const [snap] = await filesOf(dir, /\.snap$/);
    const buf = await readFile(snap!);
    const header = readFrame(buf, 0);
    if (!header.ok) throw new Error('unexpected snapshot layout');
    buf[header.next + 12] ^= 0x20; // inside the dictionary's JSON: its CRC no longer matches
    await writeFile(snap!, buf);
    await expect(load(snap!, codec)).rejects.toMatchObject({ code: 'KDP_STORE_CORRUPT' });
  });
});
