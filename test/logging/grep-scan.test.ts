import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileGrep, grepFile, requiredLiteral, type GrepPattern } from '../../src/logging/grep-scan.js';
import { seededRng } from '../../src/scheduler/rng.js';

describe('grep scan', () => {
  it('finds the run of plain characters every match must contain, or none', () => {
    expect(requiredLiteral('connection reset')).toBe('connection reset');
    expect(requiredLiteral('status=5[0-9][0-9]')).toBe('status=5');
    expect(requiredLiteral('^GET /api/v\\d+/pods$')).toBe('GET /api/v');
    expect(requiredLiteral('colou?r is red')).toBe('r is red');
    expect(requiredLiteral('ab*cdef')).toBe('cdef');
    expect(requiredLiteral('a\\.b\\.c')).toBe('a.b.c');
    expect(requiredLiteral('\\x41BC')).toBe('BC');
    expect(requiredLiteral('\\u{1F600}xyz')).toBe('xyz');
    expect(requiredLiteral('\\p{L}+abc')).toBe('abc');
    expect(requiredLiteral('(foo|bar)baz')).toBe('baz');
    expect(requiredLiteral('error|warn')).toBeUndefined();
    expect(requiredLiteral('x{2,}yz')).toBe('yz');
    expect(requiredLiteral('.*')).toBeUndefined();
    expect(compileGrep('(?i)error').literal).toBeUndefined();
  });

  it('with or without the literal search, the same lines match as a per-line test', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-grep-'));
    try {
      const rnd = seededRng(7);
      const words = ['GET', 'POST', 'status=200', 'status=503', 'error', 'ünï', 'abcabc', 'x.y', ''];
      const lines = Array.from({ length: 5000 }, () =>
        Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => words[Math.floor(rnd() * words.length)]).join(' '));
      const file = join(dir, 'seg.log');
      writeFileSync(file, lines.map((l) => `${l}\n`).join(''));
      const size = Buffer.byteLength(lines.map((l) => `${l}\n`).join(''));
      const offsets: number[] = [];
      lines.reduce((o, l) => { offsets.push(o); return o + Buffer.byteLength(l) + 1; }, 0);
      for (const re of ['status=5\\d\\d', 'GET status', '^error', 'abc$', 'ünï error', 'x\\.y', 'abc(abc)?',
        'GET.*error', 'GET|POST', '(?i)STATUS=503', 'error$', '^$']) {
        const p = compileGrep(re);
        const want = lines.flatMap((l, k) => (p.test.test(l) ? [[offsets[k], l]] : []));
        const run = (q: GrepPattern) => {
          const got: Array<[number, string]> = [];
          grepFile(file, 0, size, q, (o, l) => got.push([o, l]));
          return got;
        };
        expect(run(p), re).toEqual(want);
        expect(run({ scan: p.scan, test: p.test }), re).toEqual(want);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
