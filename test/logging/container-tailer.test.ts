import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildContainerTailer } from '../../src/logging/container-tailer.js';
import { buildCriAssembler } from '../../src/logging/cri-lines.js';
import type { LogRecord } from '../../src/logging/record.js';

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

function fixture() {
  const root = mkdtempSync(join(tmpdir(), 'kdp-tailer-'));
  dirs.push(root);
  const pods = join(root, 'n1', 'pods');
  const got: LogRecord[] = [];
  const asked: string[] = [];
  const labels: Record<string, Record<string, string>> = { 'uid-1': { app: 'web' } };
  const tailer = buildContainerTailer({
    roots: () => [{ node: 'n1', dir: pods }],
    labelsOf: (_ns, _pod, uid) => { asked.push(uid); return labels[uid]; },
    sink: (r) => got.push(r), positionsFile: join(root, 'positions.json'), now: () => 42,
  });
  const dir = join(pods, 'default_web-1_uid-1', 'web');
  mkdirSync(dir, { recursive: true });
  return { root, pods, dir, got, asked, labels, tailer, msgs: () => got.map((r) => r.message) };
}

const cri = (sec: number, stream: string, tag: string, text: string) =>
  `2026-12-04T07:00:${String(sec).padStart(2, '0')}.123456789Z ${stream} ${tag} ${text}\n`;

describe('CRI lines', () => {
  it('joins partial lines per stream and keeps lines not in the format', () => {
    const a = buildCriAssembler();
    expect(a.push('2026-12-04T07:00:00.5Z stdout P hel', 1)).toBeUndefined();
    expect(a.push('2026-12-04T07:00:01Z stderr F oops', 1)).toMatchObject({ stream: 'stderr', message: 'oops' });
    expect(a.push('2026-12-04T07:00:02Z stdout F lo', 1)).toEqual({
      time: Date.parse('2026-12-04T07:00:00.5Z'), stream: 'stdout', message: 'hello' });
    expect(a.push('2026-12-04T07:00:03Z stdout F', 1)).toMatchObject({ message: '' });
    expect(a.push('not a cri line', 7)).toEqual({ time: 7, stream: 'stdout', message: 'not a cri line' });
    expect(a.push('2026-12-04T07:00:03.000000001+02:00 stdout F x', 1)!.time)
      .toBeCloseTo(Date.parse('2026-12-04T05:00:03Z'), 3);
  });
});

describe('container log tailer', () => {
  it('reads new whole lines only, with the pod labels looked up once', () => {
    const f = fixture();
    writeFileSync(join(f.dir, '0.log'), cri(1, 'stdout', 'F', 'one') + cri(2, 'stderr', 'F', 'two'));
    f.tailer.poll();
    appendFileSync(join(f.dir, '0.log'), `${cri(3, 'stdout', 'F', 'three')}2026-12-04T07:00:04Z stdout F fo`);
    f.tailer.poll();
    expect(f.msgs()).toEqual(['one', 'two', 'three']);
    appendFileSync(join(f.dir, '0.log'), 'ur\n');
    f.tailer.poll();
    expect(f.msgs()).toEqual(['one', 'two', 'three', 'four']);
    expect(f.got[1]).toMatchObject({ stream: 'stderr', source: { kind: 'container', namespace: 'default',
      pod: 'web-1', uid: 'uid-1', container: 'web', node: 'n1', labels: { app: 'web' } } });
    expect(f.got[0]!.time).toBeCloseTo(Date.parse('2026-12-04T07:00:01.123Z') + 0.456789, 3);
    expect(f.asked).toEqual(['uid-1']);
    f.tailer.stop();
  });

  it('follows rotation: the renamed file to its end, then the new one from its start', () => {
    const f = fixture();
    writeFileSync(join(f.dir, '0.log'), cri(1, 'stdout', 'F', 'a'));
    f.tailer.poll();
    appendFileSync(join(f.dir, '0.log'), cri(2, 'stdout', 'F', 'b'));
    renameSync(join(f.dir, '0.log'), join(f.dir, '0.log.20261204-070002'));
    writeFileSync(join(f.dir, '0.log'), cri(3, 'stdout', 'F', 'c'));
    f.tailer.poll();
    rmSync(join(f.dir, '0.log.20261204-070002'));
    writeFileSync(join(f.dir, '1.log'), cri(4, 'stdout', 'F', 'd'));
    f.tailer.poll();
    expect(f.msgs()).toEqual(['a', 'b', 'c', 'd']);
    f.tailer.stop();
  });

  it('keeps the last lines and labels of a pod whose directory is removed', () => {
    const f = fixture();
    writeFileSync(join(f.dir, '0.log'), cri(1, 'stdout', 'F', 'alive'));
    f.tailer.poll();
    appendFileSync(join(f.dir, '0.log'), cri(2, 'stdout', 'F', 'last words'));
    delete f.labels['uid-1'];
    rmSync(join(f.pods, 'default_web-1_uid-1'), { recursive: true });
    f.tailer.poll();
    expect(f.msgs()).toEqual(['alive', 'last words']);
    expect(f.got[1]!.source).toMatchObject({ labels: { app: 'web' } });
    f.tailer.stop();
  });

  it('an idle pod is looked at less often, and at least every eighth poll', () => {
    const f = fixture();
    writeFileSync(join(f.dir, '0.log'), cri(1, 'stdout', 'F', 'start'));
    const old = new Date(Date.now() - 60_000);
    for (const d of [f.dir, join(f.dir, '..'), f.pods]) utimesSync(d, old, old);
    for (let i = 0; i < 40; i++) f.tailer.poll();
    appendFileSync(join(f.dir, '0.log'), cri(2, 'stdout', 'F', 'wake up'));
    let polls = 0;
    while (!f.msgs().includes('wake up') && polls < 20) { f.tailer.poll(); polls++; }
    expect(polls).toBeGreaterThan(0);
    expect(polls).toBeLessThanOrEqual(8);
    f.tailer.stop();
  });

  it('resumes from the saved positions after a restart', () => {
    const f = fixture();
    writeFileSync(join(f.dir, '0.log'), cri(1, 'stdout', 'F', 'before'));
    f.tailer.poll();
    f.tailer.stop();
    appendFileSync(join(f.dir, '0.log'), cri(2, 'stdout', 'F', 'while down'));
    const again: string[] = [];
    const t2 = buildContainerTailer({ roots: () => [{ node: 'n1', dir: f.pods }], labelsOf: () => undefined,
      sink: (r) => again.push(r.message), positionsFile: join(f.root, 'positions.json') });
    t2.poll();
    expect(again).toEqual(['while down']);
    t2.stop();
  });
});
