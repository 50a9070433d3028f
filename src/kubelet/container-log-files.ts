// Container logs as a CRI runtime keeps them (containerd/CRI-O + the kubelet's container log
// manager), so that a node-level collector can tail them like /var/log/pods.
//
// Contract (stable; cluster-level logging tails these files):
// - Layout: `<nodeDir>/pods/<namespace>_<pod>_<uid>/<container>/<restartCount>.log`, one file per
//   container run (`containerLogPath`). `nodeDir` is `<dataDir>/nodes/<node>` (`nodeDirOf`).
//   Namespaces and pod names are DNS labels/subdomains (no `_`), so the directory name splits on
//   `_` from the right.
// - Each line is one CRI record: `<RFC3339Nano UTC> <stdout|stderr> <F|P> <content>\n`. `F` ends a
//   line of the program's output; `P` is a piece of a longer line (16 KiB each) whose rest follows.
// - Rotation: before a record would take the live file past `maxSize` (10 MiB, upstream's
//   containerLogMaxSize) it is renamed to `<restartCount>.log.<YYYYMMDD-HHMMSS>` (UTC; a `-N` suffix if that name is taken)
//   and a new `<restartCount>.log` is started; at most `maxFiles` (5) files per run are kept,
//   oldest rotated ones deleted first (upstream also gzips older rotations; kdp does not). A
//   tailer that reaches EOF and finds a different file at the path reopens it from 0.
// - Lifetime: a run's file stays after the container exits and after the pod stops; the
//   kubelet keeps the current and the previous run of each container (`logs --previous`) and
//   removes the pod's directory when the pod is removed from the API server.
// Where a node has no data dir (programmatic tests) `memoryLogStore` keeps the same files in
// memory behind the same interface.

import {
  closeSync, fstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, statSync, writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { parseRfc3339 } from '../util/rfc3339.js';

export const CONTAINER_LOG_MAX_SIZE = 10 * 1024 * 1024;
export const CONTAINER_LOG_MAX_FILES = 5;
/** containerd's maximum record content; longer lines are split into `P` records. */
export const CRI_MAX_LINE = 16 * 1024;

export type LogStream = 'stdout' | 'stderr';

export interface PodLogRef { readonly namespace: string; readonly name: string; readonly uid: string }

/** A node's own directory in a kdp data dir. */
export function nodeDirOf(dataDir: string, node: string): string {
  return join(dataDir, 'nodes', node);
}

/** `<nodeDir>/pods/<namespace>_<pod>_<uid>` (as /var/log/pods). */
export function podLogDir(nodeDir: string, pod: PodLogRef): string {
  return join(nodeDir, 'pods', `${pod.namespace}_${pod.name}_${pod.uid}`);
}

/** `<nodeDir>/pods/<namespace>_<pod>_<uid>/<container>/<restartCount>.log`. */
export function containerLogPath(nodeDir: string, pod: PodLogRef, container: string, restartCount: number): string {
  return join(podLogDir(nodeDir, pod), container, `${restartCount}.log`);
}

// ---- time -------------------------------------------------------------------------------------

let lastNanos = 0n;

/** Nanoseconds since the epoch: the wall clock's milliseconds, the monotonic clock's digits
 *  below them, never going back (records of one process keep their order). */
export function nowNanos(): bigint {
  const t = BigInt(Date.now()) * 1_000_000n + process.hrtime.bigint() % 1_000_000n;
  lastNanos = t > lastNanos ? t : lastNanos + 1n;
  return lastNanos;
}

/** RFC3339Nano in UTC; `fixed`: always 9 fraction digits (the kubelet's `--timestamps` output). */
export function formatRfc3339Nano(ns: bigint, fixed = false): string {
  const secs = ns / 1_000_000_000n;
  const base = new Date(Number(secs) * 1000).toISOString().slice(0, 19);
  let frac = (ns % 1_000_000_000n).toString().padStart(9, '0');
  if (!fixed) frac = frac.replace(/0+$/, '');
  return `${base}${frac ? `.${frac}` : ''}Z`;
}

// ---- records ----------------------------------------------------------------------------------

export interface CriRecord {
  /** Nanoseconds since the epoch. */
  readonly time: bigint;
  readonly stream: LogStream;
  /** A `P` record: the line continues in the next record. */
  readonly partial: boolean;
  readonly content: Buffer;
}

/** One record line (with its newline). */
export function formatCriRecord(time: bigint, stream: LogStream, partial: boolean, content: Buffer | string): Buffer {
  return Buffer.concat([Buffer.from(`${formatRfc3339Nano(time)} ${stream} ${partial ? 'P' : 'F'} `),
    Buffer.isBuffer(content) ? content : Buffer.from(content), Buffer.from('\n')]);
}

/** Parses one record line (without its newline); undefined when it is not one. */
export function parseCriRecord(line: Buffer): CriRecord | undefined {
  const sp1 = line.indexOf(0x20);
  const sp2 = sp1 < 0 ? -1 : line.indexOf(0x20, sp1 + 1);
  if (sp2 < 0) return undefined;
  const time = parseRfc3339(line.subarray(0, sp1).toString());
  const stream = line.subarray(sp1 + 1, sp2).toString();
  if (time === undefined || (stream !== 'stdout' && stream !== 'stderr')) return undefined;
  // The tag may carry more flags after `:` (CRI's `P:…`); the first is F or P.
  const sp3 = line.indexOf(0x20, sp2 + 1);
  const tag = line.subarray(sp2 + 1, sp3 < 0 ? line.length : sp3).toString().split(':')[0];
  if (tag !== 'F' && tag !== 'P') return undefined;
  return { time, stream, partial: tag === 'P', content: sp3 < 0 ? Buffer.alloc(0) : line.subarray(sp3 + 1) };
}

// ---- storage ----------------------------------------------------------------------------------

/** An open file being read: reads keep working after the path is renamed (rotation). */
export interface LogFileReader {
  /** What file it is (changes when the path gets a new file). */
  readonly id: string;
  /** The bytes from `from` to the current end. */
  read(from: number): Buffer;
  close(): void;
}

interface LogFileAppender { write(data: Buffer): void; size(): number; close(): void }

/** The few file operations the store needs: the host's files, or a map in memory. */
interface LogStorage {
  append(path: string): LogFileAppender;
  open(path: string): LogFileReader | undefined;
  id(path: string): string | undefined;
  rename(from: string, to: string): void;
  exists(path: string): boolean;
  remove(path: string): void;
  list(dir: string): string[];
}

function fileStorage(): LogStorage {
  const idOf = (s: { dev: number; ino: number }) => `${s.dev}:${s.ino}`;
  return {
    append(path) {
      mkdirSync(dirname(path), { recursive: true });
      const fd = openSync(path, 'a', 0o640);
      let size = fstatSync(fd).size;
      return {
        write(data) { writeSync(fd, data); size += data.length; },
        size: () => size,
        close() { closeSync(fd); },
      };
    },
    open(path) {
      let fd: number;
      try { fd = openSync(path, 'r'); } catch { return undefined; }
      return {
        id: idOf(fstatSync(fd)),
        read(from) {
          const end = fstatSync(fd).size;
          if (end <= from) return Buffer.alloc(0);
          const buf = Buffer.alloc(end - from);
          let got = 0;
          while (got < buf.length) {
            const n = readSync(fd, buf, got, buf.length - got, from + got);
            if (n <= 0) break;
            got += n;
          }
          return buf.subarray(0, got);
        },
        close() { closeSync(fd); },
      };
    },
    id(path) { try { return idOf(statSync(path)); } catch { return undefined; } },
    rename: (from, to) => renameSync(from, to),
    exists(path) { try { statSync(path); return true; } catch { return false; } },
    remove: (path) => rmSync(path, { recursive: true, force: true }),
    list(dir) { try { return readdirSync(dir); } catch { return []; } },
  };
}

function memoryStorage(): LogStorage {
  interface MemFile { id: string; chunks: Buffer[]; size: number }
  const files = new Map<string, MemFile>();
  let next = 0;
  const bytes = (f: MemFile, from: number) => {
    const all = f.chunks.length === 1 ? f.chunks[0]! : Buffer.concat(f.chunks);
    f.chunks = [all];
    return all.subarray(Math.min(from, all.length));
  };
  return {
    append(path) {
      let f = files.get(path);
      if (!f) { f = { id: `m${next++}`, chunks: [], size: 0 }; files.set(path, f); }
      const file = f;
      return { write(d) { file.chunks.push(Buffer.from(d)); file.size += d.length; }, size: () => file.size, close() {} };
    },
    open(path) {
      const f = files.get(path);
      return f ? { id: f.id, read: (from) => bytes(f, from), close() {} } : undefined;
    },
    id: (path) => files.get(path)?.id,
    rename(from, to) {
      const f = files.get(from);
      if (f) { files.delete(from); files.set(to, f); }
    },
    exists: (path) => files.has(path),
    remove(path) {
      for (const k of [...files.keys()]) if (k === path || k.startsWith(`${path}/`)) files.delete(k);
    },
    list(dir) {
      const names = new Set<string>();
      for (const k of files.keys()) if (k.startsWith(`${dir}/`)) names.add(k.slice(dir.length + 1).split('/')[0]!);
      return [...names];
    },
  };
}

// ---- the store --------------------------------------------------------------------------------

/** One container run's output going into its log file. */
export interface ContainerLogWriter {
  /** A chunk of the program's output: each complete line becomes an `F` record, a line longer
   *  than 16 KiB `P` records; an unfinished line waits for its newline (or `close`). */
  write(stream: LogStream, chunk: string | Buffer): void;
  /** Writes what is left of unfinished lines as `F` records; further writes are ignored. */
  close(): void;
}

export interface ContainerLogStoreOptions {
  readonly maxSize?: number;
  readonly maxFiles?: number;
}

export interface ContainerLogStore {
  /** Where the files are; `<memory>` for the in-memory store. */
  readonly nodeDir: string;
  /** Starts (or continues, after a kubelet restart) the log file of a container run. */
  open(pod: PodLogRef, container: string, restartCount: number): ContainerLogWriter;
  /** The runs whose logs are kept, oldest first. */
  runs(uid: string, container: string): readonly number[];
  /** Opens a run's live file; undefined when there is none. */
  openRun(uid: string, container: string, run: number): LogFileReader | undefined;
  /** What file the run's path holds now (to notice a rotation). */
  currentId(uid: string, container: string, run: number): string | undefined;
  /** Calls `fn` after each write to any run of `uid`'s container; returns the unsubscribe. */
  onWrite(uid: string, container: string, fn: () => void): () => void;
  /** Removes one run's files (the kubelet keeps the current and the previous run). */
  removeRun(uid: string, container: string, run: number): void;
  /** Removes the pod's directory (the pod is gone from the API server). */
  removePod(uid: string): void;
  /** The pods whose logs are kept (those found on disk at start included). */
  podUids(): readonly string[];
}

export function fileLogStore(nodeDir: string, o: ContainerLogStoreOptions = {}): ContainerLogStore {
  return buildStore(nodeDir, fileStorage(), o);
}

export function memoryLogStore(o: ContainerLogStoreOptions = {}): ContainerLogStore {
  return buildStore('<memory>', memoryStorage(), o);
}

function rotationStamp(ms: number): string {
  const d = new Date(ms).toISOString();
  return `${d.slice(0, 4)}${d.slice(5, 7)}${d.slice(8, 10)}-${d.slice(11, 13)}${d.slice(14, 16)}${d.slice(17, 19)}`;
}

function buildStore(nodeDir: string, fs: LogStorage, o: ContainerLogStoreOptions): ContainerLogStore {
  const maxSize = o.maxSize ?? CONTAINER_LOG_MAX_SIZE;
  const maxFiles = Math.max(1, o.maxFiles ?? CONTAINER_LOG_MAX_FILES);
  const pods = new Map<string, PodLogRef>();
  const listeners = new Map<string, Set<() => void>>();
  const key = (uid: string, c: string) => `${uid}/${c}`;
  const path = (pod: PodLogRef, c: string, run: number) => containerLogPath(nodeDir, pod, c, run);
  // Pods whose directories exist from before (a restarted node keeps its logs).
  for (const dir of fs.list(join(nodeDir, 'pods'))) {
    const parts = dir.split('_');
    if (parts.length >= 3) {
      const uid = parts.pop()!;
      const name = parts.pop()!;
      pods.set(uid, { namespace: parts.join('_'), name, uid });
    }
  }
  const runPath = (uid: string, c: string, run: number) => {
    const pod = pods.get(uid);
    return pod ? path(pod, c, run) : undefined;
  };

  function rotate(file: string): void {
    const dir = dirname(file);
    const base = file.slice(dir.length + 1);
    let stamp = rotationStamp(Date.now());
    for (let n = 1; fs.exists(`${file}.${stamp}`); n++) stamp = `${rotationStamp(Date.now())}-${n}`;
    fs.rename(file, `${file}.${stamp}`);
    // The live file plus at most maxFiles-1 rotated ones; names sort by time.
    const rotated = fs.list(dir).filter((n) => n.startsWith(`${base}.`)).sort(byRotation);
    for (const old of rotated.slice(0, Math.max(0, rotated.length - (maxFiles - 1)))) fs.remove(join(dir, old));
  }

  return {
    nodeDir,
    open(pod, container, restartCount) {
      pods.set(pod.uid, pod);
      const file = path(pod, container, restartCount);
      let out = fs.append(file);
      const partial: Record<LogStream, Buffer> = { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) };
      let closed = false;
      const notify = () => { for (const fn of listeners.get(key(pod.uid, container)) ?? []) fn(); };
      // A record that would take the live file past maxSize goes into a new one.
      const emit = (stream: LogStream, isPartial: boolean, content: Buffer) => {
        const rec = formatCriRecord(nowNanos(), stream, isPartial, content);
        if (out.size() > 0 && out.size() + rec.length > maxSize) {
          out.close();
          rotate(file);
          out = fs.append(file);
        }
        out.write(rec);
      };
      return {
        write(stream, chunk) {
          if (closed) return;
          let buf = Buffer.concat([partial[stream], Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)]);
          for (;;) {
            const nl = buf.indexOf(0x0a);
            if (nl >= 0 && nl <= CRI_MAX_LINE) {
              emit(stream, false, buf.subarray(0, nl));
              buf = buf.subarray(nl + 1);
            } else if (buf.length > CRI_MAX_LINE) {
              emit(stream, true, buf.subarray(0, CRI_MAX_LINE));
              buf = buf.subarray(CRI_MAX_LINE);
            } else break;
          }
          partial[stream] = Buffer.from(buf);
          notify();
        },
        close() {
          if (closed) return;
          closed = true;
          for (const s of ['stdout', 'stderr'] as const) if (partial[s].length) emit(s, false, partial[s]);
          out.close();
          notify();
        },
      };
    },
    runs(uid, container) {
      const pod = pods.get(uid);
      if (!pod) return [];
      return fs.list(join(podLogDir(nodeDir, pod), container))
        .map((n) => /^(\d+)\.log$/.exec(n)?.[1]).filter((n): n is string => n !== undefined).map(Number)
        .sort((a, b) => a - b);
    },
    openRun(uid, container, run) {
      const p = runPath(uid, container, run);
      return p ? fs.open(p) : undefined;
    },
    currentId(uid, container, run) {
      const p = runPath(uid, container, run);
      return p ? fs.id(p) : undefined;
    },
    onWrite(uid, container, fn) {
      const k = key(uid, container);
      const set = listeners.get(k) ?? new Set();
      listeners.set(k, set.add(fn));
      return () => { set.delete(fn); if (!set.size) listeners.delete(k); };
    },
    removeRun(uid, container, run) {
      const p = runPath(uid, container, run);
      if (!p) return;
      const dir = dirname(p);
      const base = `${run}.log`;
      for (const n of fs.list(dir)) if (n === base || n.startsWith(`${base}.`)) fs.remove(join(dir, n));
    },
    removePod(uid) {
      const pod = pods.get(uid);
      if (!pod) return;
      pods.delete(uid);
      fs.remove(podLogDir(nodeDir, pod));
    },
    podUids: () => [...pods.keys()],
  };
}

/** Rotated names `N.log.YYYYMMDD-HHMMSS[-k]` in the order they were made. */
function byRotation(a: string, b: string): number {
  const k = (n: string) => {
    const m = /\.(\d{8}-\d{6})(?:-(\d+))?$/.exec(n);
    return m ? [m[1]!, Number(m[2] ?? 0)] as const : ['', 0] as const;
  };
  const [ta, na] = k(a);
  const [tb, nb] = k(b);
  return ta < tb ? -1 : ta > tb ? 1 : na - nb;
}
