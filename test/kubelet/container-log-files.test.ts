// Container log files as a CRI runtime keeps them: layout, record format, rotation within the
// size bound, and the kubelet's reading options (tail, since, timestamps, limitBytes, follow).

import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  containerLogPath, fileLogStore, formatRfc3339Nano, memoryLogStore, nodeDirOf, parseCriRecord,
  type ContainerLogStore,
} from '../../src/kubelet/container-log-files.js';
import { parseRfc3339 } from '../../src/util/rfc3339.js';
import { readContainerLog, type LogReadOptions } from '../../src/kubelet/container-log-read.js';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const tmp = () => { const d = mkdtempSync(join(tmpdir(), 'kdp-logs-')); dirs.push(d); return d; };
const pod = { namespace: 'default', name: 'web', uid: 'u-1' };

async function read(store: ContainerLogStore, run: number, o: LogReadOptions = {}): Promise<string> {
  let s = '';
  for await (const b of readContainerLog(store, pod.uid, 'c', run, o)) s += b.toString();
  return s;
}

describe('container log files', () => {
  it('keeps one CRI-format file per run under <nodeDir>/pods/<ns>_<pod>_<uid>/<container>/', () => {
    const nodeDir = nodeDirOf(tmp(), 'n1');
    const store = fileLogStore(nodeDir);
    const w = store.open(pod, 'c', 0);
    w.write('stdout', 'hello\nwor');
    w.write('stdout', 'ld\n');
    w.write('stderr', 'oops');
    w.close();
    const path = containerLogPath(nodeDir, pod, 'c', 0);
    expect(path).toBe(join(nodeDir, 'pods', 'default_web_u-1', 'c', '0.log'));
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z stdout F hello$/);
    expect(lines[1]).toMatch(/ stdout F world$/);
    expect(lines[2]).toMatch(/ stderr F oops$/);
    expect(store.runs(pod.uid, 'c')).toEqual([0]);
  });

  it('splits lines longer than 16 KiB into P records and joins them when read', async () => {
    const store = memoryLogStore();
    const w = store.open(pod, 'c', 0);
    const long = 'x'.repeat(40_000);
    w.write('stdout', `${long}\nshort\n`);
    w.close();
    const f = store.openRun(pod.uid, 'c', 0)!;
    const recs = f.read(0).toString().trimEnd().split('\n').map((l) => parseCriRecord(Buffer.from(l))!);
    expect(recs.map((r) => r.partial)).toEqual([true, true, false, false]);
    expect(await read(store, 0)).toBe(`${long}\nshort\n`);
    expect(await read(store, 0, { timestamps: true })).toMatch(/^\S+Z x{40000}\n\S+Z short\n$/);
  });

  it('rotates at the size bound and keeps at most maxFiles files per run', () => {
    const nodeDir = nodeDirOf(tmp(), 'n1');
    const store = fileLogStore(nodeDir, { maxSize: 2000, maxFiles: 3 });
    const w = store.open(pod, 'c', 0);
    for (let i = 0; i < 400; i++) w.write('stdout', `line ${i} ${'y'.repeat(40)}\n`);
    w.close();
    const dir = join(nodeDir, 'pods', 'default_web_u-1', 'c');
    const names = readdirSync(dir);
    expect(names).toContain('0.log');
    expect(names.length).toBe(3);
    for (const n of names) {
      expect(n).toMatch(/^0\.log(\.\d{8}-\d{6}(-\d+)?)?$/);
      expect(statSync(join(dir, n)).size).toBeLessThanOrEqual(2000);
    }
    expect(readFileSync(join(dir, '0.log'), 'utf8')).toMatch(/line 399 /);
  });

  it('answers tailLines, since and limitBytes as the kubelet', async () => {
    const store = memoryLogStore();
    const w = store.open(pod, 'c', 0);
    w.write('stdout', 'a\nb\nc\n');
    await new Promise((r) => setTimeout(r, 5));
    const mid = BigInt(Date.now()) * 1_000_000n;
    await new Promise((r) => setTimeout(r, 5));
    w.write('stdout', 'd\ne\n');
    expect(await read(store, 0, { tailLines: 2 })).toBe('d\ne\n');
    expect(await read(store, 0, { tailLines: 0 })).toBe('');
    expect(await read(store, 0, { since: mid }), String(mid)).toBe('d\ne\n');
    expect(await read(store, 0, { limitBytes: 3 })).toBe('a\nb');
    expect(await read(store, 0, { tailLines: 1, timestamps: true })).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z e\n$/);
  });

  it('follows new lines and ends when the run stops, across a rotation', async () => {
    const store = memoryLogStore({ maxSize: 300 });
    const w = store.open(pod, 'c', 0);
    w.write('stdout', 'first\n');
    let running = true;
    const got: string[] = [];
    const done = (async () => {
      for await (const b of readContainerLog(store, pod.uid, 'c', 0, { follow: true },
        { running: () => running, pollMs: 20 })) got.push(b.toString());
    })();
    await new Promise((r) => setTimeout(r, 30));
    for (let i = 0; i < 20; i++) {
      w.write('stdout', `later ${i}\n`);
      await new Promise((r) => setTimeout(r, 2));
    }
    w.close();
    running = false;
    await done;
    const text = got.join('');
    expect(text.startsWith('first\n')).toBe(true);
    expect(text).toContain('later 19\n');
  });

  it('formats and parses RFC3339Nano times', () => {
    const ns = parseRfc3339('2024-01-02T03:04:05.123456789Z')!;
    expect(formatRfc3339Nano(ns)).toBe('2024-01-02T03:04:05.123456789Z');
    expect(formatRfc3339Nano(parseRfc3339('2024-01-02T03:04:05.5Z')!)).toBe('2024-01-02T03:04:05.5Z');
    expect(formatRfc3339Nano(parseRfc3339('2024-01-02T03:04:05Z')!, true)).toBe('2024-01-02T03:04:05.000000000Z');
    expect(parseRfc3339('2024-01-02T04:04:05+01:00')).toBe(parseRfc3339('2024-01-02T03:04:05Z'));
  });

  it('removes a pod directory and finds existing pods again after a restart', () => {
    const nodeDir = nodeDirOf(tmp(), 'n1');
    const a = fileLogStore(nodeDir);
    a.open(pod, 'c', 0).close();
    a.open(pod, 'c', 1).close();
    const b = fileLogStore(nodeDir);
    expect(b.podUids()).toEqual([pod.uid]);
    expect(b.runs(pod.uid, 'c')).toEqual([0, 1]);
    b.removeRun(pod.uid, 'c', 0);
    expect(b.runs(pod.uid, 'c')).toEqual([1]);
    b.removePod(pod.uid);
    expect(readdirSync(join(nodeDir, 'pods'))).toEqual([]);
  });
});
