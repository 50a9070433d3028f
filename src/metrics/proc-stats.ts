// CPU time and resident memory of process trees, read from /proc (netns mode: a container is its
// main process and every descendant). CPU is utime+stime plus cutime+cstime (children already
// reaped) over the tree, so a shell's finished commands still count; memory is the sum of the
// tree's VmRSS (shared pages count once per process: an upper bound of the cgroup working set
// upstream reports). `ProcSource` is the boundary; `buildFakeProcSource` stands in for tests.

import { readdirSync, readFileSync } from 'node:fs';

export interface ProcInfo {
  readonly pid: number;
  readonly ppid: number;
  /** utime + stime + cutime + cstime, in seconds. */
  readonly cpuSeconds: number;
  readonly rssBytes: number;
}

export interface ProcSource {
  /** Every process now (one consistent pass over /proc). */
  snapshot(): Map<number, ProcInfo>;
}

/** Linux's USER_HZ, fixed at 100 for the userspace ABI on every architecture kdp runs on. */
const CLK_TCK = 100;

/** One /proc/<pid>/stat line; undefined for a malformed one. */
export function parseStat(line: string, rssBytes: number): ProcInfo | undefined {
  const close = line.lastIndexOf(')');
  const pid = Number.parseInt(line, 10);
  if (close < 0 || !Number.isInteger(pid)) return undefined;
  const f = line.slice(close + 2).split(' ');
  // After `comm`: f[0] is field 3 (state), so field N is f[N-3].
  const at = (n: number) => Number(f[n - 3]);
  const ticks = at(14) + at(15) + at(16) + at(17);
  if (!Number.isFinite(ticks)) return undefined;
  return { pid, ppid: at(4), cpuSeconds: ticks / CLK_TCK, rssBytes };
}

function vmRss(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch { return 0; }
}

/** The host's /proc. Processes that exit during the pass are left out. */
export function buildProcSource(root = '/proc'): ProcSource {
  return {
    snapshot() {
      const out = new Map<number, ProcInfo>();
      for (const name of readdirSync(root)) {
        if (!/^\d+$/.test(name)) continue;
        try {
          const info = parseStat(readFileSync(`${root}/${name}/stat`, 'utf8'), 0);
          if (info) out.set(info.pid, info);
        } catch { /* exited meanwhile */ }
      }
      return out;
    },
  };
}

export function buildFakeProcSource(procs: ProcInfo[]): ProcSource & { procs: ProcInfo[] } {
  const me = { procs, snapshot: () => new Map(me.procs.map((p) => [p.pid, p])) };
  return me;
}

/** Usage of the tree rooted at each of `roots` (a root absent from the snapshot: undefined). */
export function treeUsage(snap: Map<number, ProcInfo>, roots: readonly number[], rss: (pid: number) => number = vmRss):
  Map<number, { cpuSeconds: number; memoryBytes: number }> {
  const children = new Map<number, number[]>();
  for (const p of snap.values()) {
    const list = children.get(p.ppid) ?? [];
    list.push(p.pid);
    children.set(p.ppid, list);
  }
  const out = new Map<number, { cpuSeconds: number; memoryBytes: number }>();
  for (const root of roots) {
    if (!snap.has(root)) continue;
    let cpu = 0; let mem = 0;
    const stack = [root];
    const seen = new Set<number>();
    while (stack.length) {
      const pid = stack.pop()!;
      if (seen.has(pid)) continue;
      seen.add(pid);
      const p = snap.get(pid)!;
      cpu += p.cpuSeconds;
      mem += p.rssBytes || rss(pid);
      stack.push(...(children.get(pid) ?? []));
    }
    out.set(root, { cpuSeconds: cpu, memoryBytes: mem });
  }
  return out;
}

/** One /proc pass shared by the nodes scraped within `ttlMs` of it (a collector round scrapes
 *  every node at once; each would otherwise read every process again). */
export function sharedProcSource(inner: ProcSource, ttlMs = 500, now: () => number = Date.now): ProcSource {
  let last: { at: number; snap: Map<number, ProcInfo> } | undefined;
  return {
    snapshot() {
      const t = now();
      if (!last || t - last.at > ttlMs) last = { at: t, snap: inner.snapshot() };
      return last.snap;
    },
  };
}
