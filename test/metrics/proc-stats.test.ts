// The netns usage reader: /proc/<pid>/stat parsed past a command name with spaces and
// parentheses; a container's usage is its whole process tree (reaped children included through
// cutime/cstime); a node's sample sums its running containers plus kdp's share.

import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { buildNodeStatsSource } from '../../src/metrics/node-stats.js';
import { buildFakeProcSource, parseStat, sharedProcSource, treeUsage } from '../../src/metrics/proc-stats.js';

// Fields 3.. of a stat line: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
// utime stime cutime cstime …
const stat = (pid: number, comm: string, ppid: number, ticks: [number, number, number, number]) =>
  `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1 4194560 100 0 0 0 ${ticks.join(' ')} 20 0 1 0 12345 1000 200`;

describe('netns usage from /proc', () => {
  it('parses a stat line whose command has spaces and parentheses', () => {
    expect(parseStat(stat(42, 'sh -c (x) y', 7, [150, 50, 30, 20]), 0))
      .toEqual({ pid: 42, ppid: 7, cpuSeconds: 2.5, rssBytes: 0 });
    expect(parseStat('garbage', 0)).toBeUndefined();
  });

  it('sums a container\'s process tree', () => {
    const snap = new Map([
      [10, { pid: 10, ppid: 1, cpuSeconds: 1, rssBytes: 100 }],
      [11, { pid: 11, ppid: 10, cpuSeconds: 2, rssBytes: 200 }],
      [12, { pid: 12, ppid: 11, cpuSeconds: 3, rssBytes: 300 }],
      [20, { pid: 20, ppid: 1, cpuSeconds: 7, rssBytes: 700 }],
    ]);
    expect(treeUsage(snap, [10, 99])).toEqual(new Map([[10, { cpuSeconds: 6, memoryBytes: 600 }]]));
  });

  it('a node sample: running containers by pid, plus kdp\'s share', () => {
    const proc = buildFakeProcSource([{ pid: 100, ppid: 1, cpuSeconds: 4, rssBytes: 1 << 20 },
      { pid: 101, ppid: 100, cpuSeconds: 1, rssBytes: 1 << 20 }]);
    const pod = { metadata: { name: 'busy', namespace: 'default', uid: 'u1' },
      spec: { containers: [{ name: 'main', image: 'busybox' }, { name: 'gone', image: 'busybox' }] },
      status: { containerStatuses: [
        { name: 'main', state: { running: { startedAt: '2026-01-01T00:00:00Z' } } },
        { name: 'gone', state: { terminated: { exitCode: 0 } } }] } } as unknown as Pod;
    const sample = buildNodeStatsSource({ node: 'n1', startTime: 0, pods: () => [pod], now: () => 5,
      proc, containerPid: (uid, c) => (uid === 'u1' && c === 'main' ? 100 : undefined),
      ownShare: () => ({ cpuSeconds: 10, memoryBytes: 1 << 20 }) })();
    expect(sample.pods).toEqual([{ namespace: 'default', name: 'busy', uid: 'u1', containers: [
      { name: 'main', startTime: Date.parse('2026-01-01T00:00:00Z'), cpuSeconds: 5, memoryBytes: 2 << 20 }] }]);
    expect(sample).toMatchObject({ cpuSeconds: 15, memoryBytes: 3 << 20, timestamp: 5 });
  });

  it('nodes scraped together share one /proc pass', () => {
    let passes = 0;
    let t = 0;
    const shared = sharedProcSource({ snapshot: () => { passes++; return new Map(); } }, 500, () => t);
    shared.snapshot(); shared.snapshot();
    t = 501;
    shared.snapshot();
    expect(passes).toBe(2);
  });
});
