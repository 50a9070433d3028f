import { describe, expect, it } from 'vitest';
import { SortedKeys } from '../../src/store/sorted-keys.js';
import { KeyIndex, prefixEnd } from '../../src/store/mvcc.js';
import { crc32, tableCrc32 } from '../../src/store/crc32.js';

function prng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

describe('sorted key set', () => {
  it('matches a sorted array under random inserts and deletes across chunk splits', () => {
    const rnd = prng(7);
    const keys = new SortedKeys();
    const ref = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const k = `/registry/pods/ns${Math.floor(rnd() * 20)}/p${Math.floor(rnd() * 3000)}`;
      if (rnd() < 0.7) {
        expect(keys.insert(k)).toBe(!ref.has(k));
        ref.add(k);
      } else {
        expect(keys.delete(k)).toBe(ref.has(k));
        ref.delete(k);
      }
    }
    const sorted = [...ref].sort();
    expect([...keys.keysFrom({ c: 0, i: 0 })]).toEqual(sorted);
    expect(keys.size).toBe(sorted.length);
    const probe = '/registry/pods/ns13/';
    const expectedRank = sorted.findIndex((k) => k >= probe);
    expect(keys.rank(keys.lowerBound(probe))).toBe(expectedRank);
    expect(keys.keyAt(keys.upperBound(sorted[10]!))).toBe(sorted[11]);
  });

  it('prefix listing does not leak into sibling prefixes', () => {
    const idx = new KeyIndex();
    for (const key of ['/a/b', '/a/b/c', '/a/b0', '/a/c', '/a/b/']) {
      idx.put({ key, packed: '', createRevision: 2, modRevision: 2, version: 1 });
    }
    expect([...idx.range('/a/b/')].map((kv) => kv.key)).toEqual(['/a/b/', '/a/b/c']);
    expect(idx.page('/a/b/', undefined, 1)).toMatchObject({ more: true, remaining: 1 });
    expect(prefixEnd('/a/b/')).toBe('/a/b0');
    expect(prefixEnd('')).toBeUndefined();
  });
});

describe('crc32', () => {
  it('the table fallback agrees with zlib on the standard check value and random data', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(tableCrc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    const data = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 31) & 0xff));
    expect(tableCrc32(data)).toBe(crc32(data));
  });
});
