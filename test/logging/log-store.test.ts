import { mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLogWriter } from '../../src/logging/log-writer.js';
import { readLogs, readNewLogs, type LogQuery } from '../../src/logging/log-reader.js';
import { compileGrep } from '../../src/logging/grep-scan.js';
import type { LogRecord, LogSource } from '../../src/logging/record.js';
import { listSegments, segmentBytes } from '../../src/logging/segments.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'kdp-logstore-'));
  dirs.push(d);
  return d;
}
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

const web = (pod: string): LogSource => ({ kind: 'container', namespace: 'default', pod, uid: `uid-${pod}`,
  container: 'web', node: 'n1', labels: { app: 'web' } });
const kubelet: LogSource = { kind: 'component', component: 'kubelet', node: 'n1' };

function all(dir: string, q: LogQuery = {}): LogRecord[] {
  const out: LogRecord[] = [];
  readLogs(dir, q, (r) => out.push(r));
  return out;
}

describe('log store', () => {
  it('returns records in time order across sources and segments, with their sources', () => {
    const dir = tmp();
    const w = openLogWriter({ dir, segmentBytes: 16, flushMs: 0 });
    w.append({ time: 3000, source: web('a'), stream: 'stdout', message: 'third' });
    w.append({ time: 1000, source: kubelet, stream: 'stderr', message: 'first' });
    w.flush();
    w.append({ time: 2000, source: web('b'), stream: 'stdout', message: 'second\nsecond again' });
    w.append({ time: 4000.123, source: web('a'), stream: 'stderr', message: 'fourth ünïcode' });
    w.close();
    const got = all(dir);
    expect(got.map((r) => r.message)).toEqual(['first', 'second', 'second again', 'third', 'fourth ünïcode']);
    expect(got[0]!.source).toEqual(kubelet);
    expect(got[0]!.stream).toBe('stderr');
    expect(got[4]!.time).toBeCloseTo(4000.123, 3);
    expect(listSegments(dir).length).toBeGreaterThan(1);
  });

  it('filters by source, time range and pattern, with ^ and $ meaning the message bounds', () => {
    const dir = tmp();
    const w = openLogWriter({ dir, flushMs: 0 });
    for (let i = 0; i < 100; i++) {
      w.append({ time: i * 1000, source: web(i % 2 ? 'odd' : 'even'), stream: 'stdout',
        message: `request ${i} GET /path/${i} ok` });
    }
    w.append({ time: 200_000, source: kubelet, stream: 'stderr', message: 'Ünïcode line ERROR here' });
    w.close();
    const q = (o: LogQuery) => all(dir, o).map((r) => r.message);
    expect(q({ source: (s) => s.kind === 'container' && s.pod === 'odd' })).toHaveLength(50);
    expect(q({ sinceMs: 95_000 })).toHaveLength(6);
    expect(q({ sinceMs: 10_000, untilMs: 12_000 })).toHaveLength(3);
    expect(q({ grep: compileGrep('/path/4\\d ') })).toHaveLength(10);
    expect(q({ grep: compileGrep('^request 7') })).toEqual(['request 7 GET /path/7 ok',
      ...Array.from({ length: 10 }, (_, k) => `request ${70 + k} GET /path/${70 + k} ok`)]);
    expect(q({ grep: compileGrep('7 ok$') })).toHaveLength(10);
    expect(q({ grep: compileGrep('ok\\nrequest') })).toEqual([]);
    expect(q({ grep: compileGrep('(?i)error') })).toEqual(['Ünïcode line ERROR here']);
    expect(q({ grep: compileGrep('^Ü.*here$') })).toHaveLength(1);
    expect(q({ grep: compileGrep('GET'), source: (s) => s.kind === 'container' && s.pod === 'even',
      sinceMs: 50_000 })).toHaveLength(25);
  });

  it('keeps the store under its size bound by dropping the oldest segments', () => {
    const dir = tmp();
    const maxBytes = 64 * 1024;
    const w = openLogWriter({ dir, maxBytes, segmentBytes: 8 * 1024, flushMs: 0 });
    for (let i = 0; i < 5000; i++) {
      w.append({ time: i, source: web('a'), stream: 'stdout', message: `line ${i} ${'x'.repeat(40)}` });
      if (i % 100 === 0) w.flush();
    }
    w.close();
    const total = listSegments(dir).reduce((n, f) => n + segmentBytes(f), 0);
    expect(total).toBeLessThanOrEqual(maxBytes);
    const got = all(dir);
    expect(got.at(-1)!.message).toMatch(/^line 4999 /);
    expect(got[0]!.time).toBeGreaterThan(0);
    // What is kept is a contiguous tail.
    got.forEach((r, k) => expect(r.time).toBe(got[0]!.time + k));
    expect(readdirSync(dir).every((n) => /^\d{8}\.(log|meta|src|sum)$/.test(n))).toBe(true);
  });

  it('a reopened store continues in a new segment; a follower sees only what is new', () => {
    const dir = tmp();
    const w1 = openLogWriter({ dir, flushMs: 0 });
    w1.append({ time: 1, source: kubelet, stream: 'stderr', message: 'before' });
    w1.flush(); // not closed: as after a crash
    const cursor = readLogs(dir, {}, () => {});
    const w2 = openLogWriter({ dir, flushMs: 0 });
    w2.append({ time: 2, source: kubelet, stream: 'stderr', message: 'after' });
    w2.flush();
    const seen: string[] = [];
    readNewLogs(dir, {}, cursor, (r) => seen.push(r.message));
    expect(seen).toEqual(['after']);
    readNewLogs(dir, {}, cursor, (r) => seen.push(r.message));
    expect(seen).toEqual(['after']);
    expect(all(dir).map((r) => r.message)).toEqual(['before', 'after']);
    w2.close();
  });
});
