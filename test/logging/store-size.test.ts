import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseStoreSize } from '../../src/logging/size.js';
import { kdp } from '../helpers/cli.js';

describe('log store size', () => {
  it('takes bytes with binary suffixes, as containerLogMaxSize is written', () => {
    expect(parseStoreSize('256Mi', '--log-store-size')).toBe(256 * 2 ** 20);
    expect(parseStoreSize('2Gi', '--log-store-size')).toBe(2 * 2 ** 30);
    expect(parseStoreSize('5000000', '--log-store-size')).toBe(5_000_000);
    expect(() => parseStoreSize('10MB', '--log-store-size')).toThrow(/--log-store-size: "10MB" is not a size/);
    expect(() => parseStoreSize('100Ki', '--log-store-size')).toThrow(/below the minimum of 1Mi/);
  });

  it('kdp up refuses a bad --log-store-size before starting anything', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-logsize-'));
    try {
      const r = await kdp('up', '--virtual', '--log-store-size', 'lots', '--data-dir', dir);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/--log-store-size: "lots" is not a size/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
