// The node-level logging agent's input, as fluent-bit's tail input over /var/log/pods: every
// `<ns>_<pod>_<uid>/<container>/<n>.log` under each node's pod-log directory is read from where
// it was left (offsets kept per file identity — device and inode — and saved to a positions
// file, fluent-bit's DB), rotation is followed (a renamed `<n>.log.<stamp>` keeps its inode and
// is read to its end, the new `<n>.log` from 0), and a file whose pod directory disappears is
// read to its end through the descriptor held open, so the last lines of a deleted pod are
// kept. A pod's labels are looked up once, when its directory is first seen, and stay with its
// lines. Only whole lines are consumed; a line still being written waits for the next poll.

import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writePrivateFileSync } from '../util/private-files.js';
import { buildCriAssembler, type CriAssembler } from './cri-lines.js';
import type { ContainerSource, LogRecord } from './record.js';

export interface PodLogRoot {
  readonly node: string;
  /** Laid out as /var/log/pods. */
  readonly dir: string;
}

export interface ContainerTailerOptions {
  /** The directories to watch (asked on every poll: nodes come and go). */
  readonly roots: () => readonly PodLogRoot[];
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
  readonly source: ContainerSource;
  readonly cri: CriAssembler;
  offset: number;
  seen: boolean;
}

const POD_DIR = /^([a-z0-9.-]+)_([a-z0-9.-]+)_([A-Za-z0-9-]+)$/;
const LOG_FILE = /^(\d+)\.log(?:\.(\d{8}-\d{6}(?:-\d+)?))?$/;
const READ = 256 * 1024;

export function buildContainerTailer(o: ContainerTailerOptions): ContainerTailer {
  const now = o.now ?? Date.now;
  const files = new Map<string, Tracked>(); // dev:ino → open file
  const sources = new Map<string, ContainerSource>(); // uid/container → source
  const labels = new Map<string, Record<string, string>>(); // uid → labels at first sight
  const saved = loadPositions(o.positionsFile);
  let timer: NodeJS.Timeout | undefined;
  let dirty = false;
  const buf = Buffer.allocUnsafe(READ);

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

  /** Reads whole lines from t.offset to the end of the file. */
  function drain(t: Tracked): void {
    for (;;) {
      const n = readSync(t.fd, buf, 0, READ, t.offset);
      if (n <= 0) return;
      let whole = buf.subarray(0, n).lastIndexOf(10) + 1;
      if (whole === 0) {
        if (n < READ) return;
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
      if (n < READ) return;
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

  function visitContainer(node: string, ns: string, pod: string, uid: string, container: string, dir: string) {
    const logs = list(dir).map((n) => ({ n, m: LOG_FILE.exec(n) })).filter((x) => x.m)
      // Oldest first: by restart count, then a rotated file (by stamp) before the live one.
      .sort((a, b) => Number(a.m![1]) - Number(b.m![1]) || cmp(a.m![2] ?? '~', b.m![2] ?? '~'));
    for (const { n } of logs) {
      const path = join(dir, n);
      let st;
      try { st = statSync(path); } catch { continue; }
      const id = `${st.dev}:${st.ino}`;
      let t = files.get(id);
      if (!t) {
        let fd: number;
        try { fd = openSync(path, 'r'); } catch { continue; }
        if (fstatSync(fd).ino !== st.ino) { closeSync(fd); continue; } // replaced in between
        const from = saved.get(id) ?? 0;
        t = { fd, source: sourceFor(node, ns, pod, uid, container), cri: buildCriAssembler(),
          offset: from <= st.size ? from : 0, seen: true };
        files.set(id, t);
      }
      t.seen = true;
      drain(t);
    }
  }

  function poll(): void {
    for (const t of files.values()) t.seen = false;
    for (const root of o.roots()) {
      for (const podDir of list(root.dir)) {
        const m = POD_DIR.exec(podDir);
        if (!m) continue;
        const [, ns, pod, uid] = m as unknown as [string, string, string, string];
        for (const container of list(join(root.dir, podDir))) {
          visitContainer(root.node, ns, pod, uid, container, join(root.dir, podDir, container));
        }
      }
    }
    // Gone from every directory (pod deleted, rotated file removed): read to the end, close.
    for (const [id, t] of [...files]) if (!t.seen) closeFile(id, t);
    if (dirty && o.positionsFile) {
      dirty = false;
      const obj: Record<string, number> = {};
      for (const [id, t] of files) obj[id] = t.offset;
      writePrivateFileSync(o.positionsFile, `${JSON.stringify(obj)}\n`);
    }
  }

  const safePoll = () => { try { poll(); } catch (e) { o.onError?.(e); } };
  return {
    poll: safePoll,
    start() {
      if (timer) return;
      timer = setInterval(safePoll, o.pollMs ?? 200);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
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
