// The node-level logging agent's input, as fluent-bit's tail input over /var/log/pods: every
// `<ns>_<pod>_<uid>/<container>/<n>.log` under each node's pod-log directory is read from where
// it was left (offsets kept per file identity — device and inode — and saved to a positions
// file, fluent-bit's DB), rotation is followed (a renamed `<n>.log.<stamp>` keeps its inode and
// is read to its end, the new `<n>.log` from 0), and a file whose pod directory disappears is
// read to its end through the descriptor held open, so the last lines of a deleted pod are
// kept. A pod's labels are looked up once, when its directory is first seen, and stay with its
// lines. Only whole lines are consumed; a line still being written waits for the next poll.
// Components' own files are read the same way (`components`): the spool of processes other
// than the store's writer (component-spool.ts, CRI lines, `<pid>.log`, removed once read when
// their process is gone) and etcd's zap log.

import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pidAlive } from '../util/pid-alive.js';
import { writePrivateFileSync } from '../util/private-files.js';
import { buildCriAssembler, buildZapLines, type CriAssembler } from './cri-lines.js';
import type { ComponentSource, ContainerSource, LogRecord, LogSource } from './record.js';

export interface PodLogRoot {
  readonly node: string;
  /** Laid out as /var/log/pods. */
  readonly dir: string;
}

/** A directory of one component's log files. */
export interface ComponentLogDir {
  readonly dir: string;
  readonly source: ComponentSource;
  /** `cri`: `<n>.log` (+ rotated `<n>.log.<stamp>`) in the CRI format; `zap`: `*.log` of JSON lines. */
  readonly format: 'cri' | 'zap';
  /** Files are named by their writer's pid: once it has exited and a file is read to its end,
   *  the file is removed (its lines are in the store). */
  readonly reap?: boolean;
}

export interface ContainerTailerOptions {
  /** The directories to watch (asked on every poll: nodes come and go). */
  readonly roots: () => readonly PodLogRoot[];
  /** Components' log directories (asked on every poll). */
  readonly components?: () => readonly ComponentLogDir[];
  /** Whether a process is alive (reaping); default: signal 0. */
  readonly alive?: (pid: number) => boolean;
  /** The pod's labels, asked once per pod (by UID); undefined when the pod is not known. */
  readonly labelsOf: (namespace: string, pod: string, uid: string) => Record<string, string> | undefined;
  readonly sink: (r: LogRecord) => void;
  /** Where offsets are kept across restarts; none: start every file from 0. */
  readonly positionsFile?: string;
  /** Default 200 ms. */
  readonly pollMs?: number;
  readonly now?: () => number;
  readonly onError?: (e: unknown) => void;
}

export interface ContainerTailer {
  /** One pass over every root. */
  poll(): void;
  start(): void;
  /** A last pass, then closes every file. */
  stop(): void;
}

interface Tracked {
  readonly fd: number;
  readonly source: LogSource;
  readonly cri: CriAssembler;
  offset: number;
  seen: boolean;
}

const POD_DIR = /^([a-z0-9.-]+)_([a-z0-9.-]+)_([A-Za-z0-9-]+)$/;
const LOG_FILE = /^(\d+)\.log(?:\.(\d{8}-\d{6}(?:-\d+)?))?$/;
const ZAP_FILE = /^[A-Za-z0-9._-]+\.log$/;

/** `<n>.log` files oldest first: by number, then a rotated file (by stamp) before the live one. */
function criFiles(names: readonly string[]): string[] {
  return names.map((n) => ({ n, m: LOG_FILE.exec(n) })).filter((x) => x.m)
    .sort((a, b) => Number(a.m![1]) - Number(b.m![1]) || cmp(a.m![2] ?? '~', b.m![2] ?? '~'))
    .map((x) => x.n);
}

const zapFiles = (names: readonly string[]) => names.filter((n) => ZAP_FILE.test(n)).sort();

const READ = 256 * 1024;
/** An idle pod's files are read at least every this many polls (+1). */
const MAX_IDLE_SKIP = 7;

export function buildContainerTailer(o: ContainerTailerOptions): ContainerTailer {
  const now = o.now ?? Date.now;
  const files = new Map<string, Tracked>(); // dev:ino → open file
  const sources = new Map<string, ContainerSource>(); // uid/container → source
  const labels = new Map<string, Record<string, string>>(); // uid → labels at first sight
  const saved = loadPositions(o.positionsFile);
  let timer: NodeJS.Timeout | undefined;
  let dirty = false;
  const buf = Buffer.allocUnsafe(READ);
  const byPath = new Map<string, string>(); // path → dev:ino, as last seen
  // Directory listings, kept while the directory's mtime stays (and is not recent: two changes
  // within the file system's timestamp granularity would share one mtime).
  const listings = new Map<string, { mtimeMs: number; ino: number; names: string[] }>();
  const listed = new Set<string>();
  // Per pod directory: polls in a row with nothing new, polls still to skip, its files.
  const idle = new Map<string, { polls: number; skip: number; ids: string[]; dirs: string[] }>();
  const visiting = new Set<string>();
  function listCached(dir: string): [string[], boolean] {
    listed.add(dir);
    let st;
    try { st = statSync(dir); } catch { listings.delete(dir); return [[], false]; }
    const had = listings.get(dir);
    if (had && had.mtimeMs === st.mtimeMs && had.ino === st.ino && now() - st.mtimeMs > 2000) return [had.names, true];
    const names = list(dir);
    listings.set(dir, { mtimeMs: st.mtimeMs, ino: st.ino, names });
    return [names, false];
  }

  function sourceFor(node: string, ns: string, pod: string, uid: string, container: string): ContainerSource {
    const key = `${uid}/${container}`;
    let s = sources.get(key);
    if (!s) {
      let l = labels.get(uid);
      if (!l) { l = o.labelsOf(ns, pod, uid) ?? {}; labels.set(uid, l); }
      s = { kind: 'container', namespace: ns, pod, uid, container, node, labels: l };
      sources.set(key, s);
    }
    return s;
  }

  /** Reads whole lines from t.offset to the end of the file; whether there were any. */
  function drain(t: Tracked): boolean {
    for (let any = false; ; any = true) {
      const n = readSync(t.fd, buf, 0, READ, t.offset);
      if (n <= 0) return any;
      let whole = buf.subarray(0, n).lastIndexOf(10) + 1;
      if (whole === 0) {
        if (n < READ) return any;
        whole = n; // a full buffer without a newline is no CRI log: taken as one line
      }
      const lines = buf.toString('utf8', 0, whole).split('\n');
      if (lines.at(-1) === '') lines.pop();
      const at = now();
      for (const line of lines) {
        const e = t.cri.push(line, at);
        if (e) o.sink({ time: e.time, source: t.source, stream: e.stream, message: e.message });
      }
      t.offset += whole;
      dirty = true;
      if (n < READ) return true;
    }
  }

  function closeFile(id: string, t: Tracked): void {
    drain(t);
    const rest = readSync(t.fd, buf, 0, READ, t.offset); // a last line without its newline
    if (rest > 0) {
      const e = t.cri.push(buf.toString('utf8', 0, rest), now());
      if (e) o.sink({ time: e.time, source: t.source, stream: e.stream, message: e.message });
    }
    for (const e of t.cri.drain()) o.sink({ time: e.time, source: t.source, stream: e.stream, message: e.message });
    closeSync(t.fd);
    files.delete(id);
    saved.delete(id);
    dirty = true;
  }

  /** Reads a container's files; whether there was anything new (or a new file). */
  function visitContainer(node: string, ns: string, pod: string, uid: string, container: string, dir: string,
    ids: string[]): boolean {
    return visitFiles(dir, criFiles, () => sourceFor(node, ns, pod, uid, container), buildCriAssembler, ids);
  }

  /** Reads a directory's log files (`pick` chooses and orders them); whether there was anything new. */
  function visitFiles(dir: string, pick: (names: readonly string[]) => string[], sourceOf: () => LogSource,
    parser: () => CriAssembler, ids: string[]): boolean {
    const [names, cached] = listCached(dir);
    let fresh = !cached;
    for (const n of pick(names)) {
      const path = join(dir, n);
      const known = cached ? files.get(byPath.get(path) ?? '') : undefined;
      if (known) {
        known.seen = true;
        ids.push(byPath.get(path)!);
        if (drain(known)) fresh = true;
        continue;
      }
      let st;
      try { st = statSync(path); } catch { continue; }
      const id = `${st.dev}:${st.ino}`;
      let t = files.get(id);
      if (!t) {
        let fd: number;
        try { fd = openSync(path, 'r'); } catch { continue; }
        if (fstatSync(fd).ino !== st.ino) { closeSync(fd); continue; } // replaced in between
        const from = saved.get(id) ?? 0;
        t = { fd, source: sourceOf(), cri: parser(),
          offset: from <= st.size ? from : 0, seen: true };
        files.set(id, t);
      }
      byPath.set(path, id);
      ids.push(id);
      t.seen = true;
      if (drain(t)) fresh = true;
    }
    return fresh;
  }

  function poll(): void {
    for (const t of files.values()) t.seen = false;
    for (const root of o.roots()) {
      for (const podDir of listCached(root.dir)[0]) {
        const m = POD_DIR.exec(podDir);
        if (!m) continue;
        const [, ns, pod, uid] = m as unknown as [string, string, string, string];
        const dir = join(root.dir, podDir);
        let c = idle.get(dir);
        if (!c) idle.set(dir, c = { polls: 0, skip: 0, ids: [], dirs: [] });
        visiting.add(dir);
        if (c.skip > 0) { // idle for a while: its files are looked at every few polls
          c.skip--;
          for (const id of c.ids) { const t = files.get(id); if (t) t.seen = true; }
          for (const d of c.dirs) listed.add(d);
          continue;
        }
        let fresh = false;
        c.ids.length = 0;
        c.dirs = [dir];
        for (const container of listCached(dir)[0]) {
          const ids: string[] = [];
          const cdir = join(dir, container);
          c.dirs.push(cdir);
          if (visitContainer(root.node, ns, pod, uid, container, cdir, ids)) fresh = true;
          c.ids.push(...ids);
        }
        if (fresh) c.polls = 0;
        else c.skip = Math.min(++c.polls, MAX_IDLE_SKIP);
      }
    }
    for (const c of o.components?.() ?? []) {
      const ids: string[] = [];
      visitFiles(c.dir, c.format === 'zap' ? zapFiles : criFiles, () => c.source,
        c.format === 'zap' ? buildZapLines : buildCriAssembler, ids);
      if (c.reap) reap(c.dir);
    }
    // Gone from every directory (pod deleted, rotated file removed): read to the end, close.
    for (const [id, t] of [...files]) if (!t.seen) closeFile(id, t);
    for (const [path, id] of byPath) if (!files.has(id)) byPath.delete(path);
    for (const dir of listings.keys()) if (!listed.has(dir)) listings.delete(dir);
    listed.clear();
    for (const dir of idle.keys()) if (!visiting.has(dir)) idle.delete(dir);
    visiting.clear();
    if (dirty && o.positionsFile) {
      dirty = false;
      const obj: Record<string, number> = {};
      for (const [id, t] of files) obj[id] = t.offset;
      writePrivateFileSync(o.positionsFile, `${JSON.stringify(obj)}\n`);
    }
  }

  /** Removes the files of exited writers that were read to their end. */
  function reap(dir: string): void {
    for (const n of criFiles(listCached(dir)[0])) {
      const pid = Number(LOG_FILE.exec(n)![1]);
      if (pid === process.pid) continue;
      const path = join(dir, n);
      const id = byPath.get(path);
      const t = id === undefined ? undefined : files.get(id);
      let size: number;
      try { size = statSync(path).size; } catch { continue; }
      if (!t || t.offset < size || (o.alive ?? pidAlive)(pid)) continue;
      closeFile(id!, t);
      rmSync(path, { force: true });
    }
  }

  const safePoll = () => { try { poll(); } catch (e) { o.onError?.(e); } };
  let running = false;
  // The next poll waits at least ten times as long as this one took: a node with many pods
  // costs the process a bounded share of its time.
  const loop = () => {
    const t0 = performance.now();
    safePoll();
    if (!running) return;
    timer = setTimeout(loop, Math.max(o.pollMs ?? 200, 10 * (performance.now() - t0)));
    timer.unref();
  };
  return {
    poll: safePoll,
    start() {
      if (running) return;
      running = true;
      timer = setTimeout(loop, o.pollMs ?? 200);
      timer.unref();
    },
    stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
      safePoll();
      const obj: Record<string, number> = {};
      for (const [id, t] of [...files]) {
        drain(t);
        closeSync(t.fd);
        files.delete(id);
        obj[id] = t.offset;
      }
      if (o.positionsFile) writePrivateFileSync(o.positionsFile, `${JSON.stringify(obj)}\n`);
    },
  };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function list(dir: string): string[] {
  try { return readdirSync(dir); } catch { return []; }
}

function loadPositions(file: string | undefined): Map<string, number> {
  if (!file) return new Map();
  try {
    const obj = JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
    return new Map(Object.entries(obj).filter(([, v]) => Number.isInteger(v) && v >= 0));
  } catch {
    return new Map();
  }
}
