// The kubelet's AtomicWriter layout and update rules (upstream atomic_writer.go): files in a
// timestamped directory behind the `..data` symlink, user-visible names as symlinks into it, an
// unchanged payload writes nothing, an update swaps `..data` and drops the old directory and
// names no longer in the payload.

import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeAtomic } from '../../src/kubelet/atomic-writer.js';

const f = (path: string, text: string, mode = 0o644) => ({ path, data: Buffer.from(text), mode });
let dir = '';
afterEach(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

describe('writeAtomic', () => {
  it('lays files out as the kubelet does and reads back through the symlinks', () => {
    dir = mkdtempSync(join(tmpdir(), 'kdp-aw-'));
    expect(writeAtomic(dir, [f('a', 'one'), f('sub/b', 'two', 0o600)], new Date('2026-12-04T08:00:00Z'))).toBe(true);
    const data = readlinkSync(join(dir, '..data'));
    expect(data).toMatch(/^\.\.2026_12_04_08_00_00\./);
    expect(readlinkSync(join(dir, 'a'))).toBe('..data/a');
    expect(readlinkSync(join(dir, 'sub'))).toBe('..data/sub');
    expect(readFileSync(join(dir, 'a'), 'utf8')).toBe('one');
    expect(readFileSync(join(dir, 'sub', 'b'), 'utf8')).toBe('two');
    expect(statSync(join(dir, 'sub', 'b')).mode & 0o777).toBe(0o600);
  });

  it('an unchanged payload writes nothing; a change swaps ..data and removes what went', () => {
    dir = mkdtempSync(join(tmpdir(), 'kdp-aw-'));
    writeAtomic(dir, [f('a', 'one'), f('gone', 'x')]);
    const first = readlinkSync(join(dir, '..data'));
    expect(writeAtomic(dir, [f('a', 'one'), f('gone', 'x')])).toBe(false);
    expect(readlinkSync(join(dir, '..data'))).toBe(first);
    expect(writeAtomic(dir, [f('a', 'two')])).toBe(true);
    const second = readlinkSync(join(dir, '..data'));
    expect(second).not.toBe(first);
    expect(readFileSync(join(dir, 'a'), 'utf8')).toBe('two');
    expect(readdirSync(dir).sort()).toEqual(['..data', second, 'a'].sort());
    expect(() => lstatSync(join(dir, 'gone'))).toThrow();
    // A mode change alone is a change too.
    expect(writeAtomic(dir, [f('a', 'two', 0o400)])).toBe(true);
    expect(statSync(join(dir, 'a')).mode & 0o777).toBe(0o400);
  });

  it.each(['../x', '/abs', '..hidden', 'a//b', ''])('refuses the path %j, naming it', (p) => {
    dir = mkdtempSync(join(tmpdir(), 'kdp-aw-'));
    expect(() => writeAtomic(dir, [f(p, 'x')])).toThrow(/must be relative/);
    expect(readdirSync(dir)).toEqual([]);
  });
});
