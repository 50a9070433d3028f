// Component logs of processes other than the store's writer — `kdp apiserver` (a replica of
// `kdp up --apiservers`, or alone), `kdp node`, `kdp scheduler`, `kdp controller-manager` —
// kept as journald keeps a unit's output: each process appends its lines to its own file,
// `<data-dir>/component-logs/<component>[.<node>]/<pid>.log`, in the CRI log format the
// kubelet writes for containers, and the collector (collector.ts, in `kdp up` or the
// `kdp apiserver` that owns the store) tails every such file into the store as that
// component's lines, as it tails pods' files. A file is rotated past ROTATE_BYTES (one rotated
// file kept) and, once its process has exited and it has been read to its end, removed by the
// collector; the store keeps its lines.

import { closeSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { PRIVATE_DIR_MODE } from '../util/private-files.js';
import { COMPONENTS, formatTime, type ComponentName, type ComponentSource, type LogStream } from './record.js';

export const ROTATE_BYTES = 8 * 1024 * 1024;

export function componentLogRoot(dataDir: string): string {
  return join(dataDir, 'component-logs');
}

/** `<component>[.<node>]`: node names are DNS names, component names have no dots. */
export function componentDirName(component: ComponentName, node?: string): string {
  return node ? `${component}.${node}` : component;
}

/** The source of a component directory's name; undefined for anything else. */
export function componentOfDir(name: string): ComponentSource | undefined {
  const dot = name.indexOf('.');
  const component = (dot < 0 ? name : name.slice(0, dot)) as ComponentName;
  const node = dot < 0 ? undefined : name.slice(dot + 1);
  if (!COMPONENTS.includes(component)) return undefined;
  if (node !== undefined && !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(node)) return undefined;
  return { kind: 'component', component, ...(node ? { node } : {}) };
}

/** Every component directory under the data dir, with its source. */
export function componentLogDirs(dataDir: string): Array<{ dir: string; source: ComponentSource }> {
  const root = componentLogRoot(dataDir);
  let names: string[];
  try { names = readdirSync(root); } catch { return []; }
  return names.flatMap((n) => {
    const source = componentOfDir(n);
    return source ? [{ dir: join(root, n), source }] : [];
  });
}

export interface ComponentLog {
  /** Appends one line (a message with newlines: one record per line). */
  line(message: string, stream?: LogStream): void;
  close(): void;
}

const open = new Map<string, ComponentLog>();

/** This process's log file of `component` (on `node`), opened once per process. A failing write
 *  (disk full) drops the line: a component does not stop for its log. */
export function componentLog(dataDir: string, component: ComponentName, node?: string,
  pid = process.pid): ComponentLog {
  const dir = join(componentLogRoot(dataDir), componentDirName(component, node));
  const key = `${dir}\u0000${pid}`;
  const had = open.get(key);
  if (had) return had;
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const file = join(dir, `${pid}.log`);
  let fd: number | undefined = openSync(file, 'a', 0o600);
  let size = 0;
  const rotate = () => {
    closeSync(fd!);
    for (const f of readdirSync(dir)) if (f.startsWith(`${pid}.log.`)) rmSync(join(dir, f), { force: true });
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
    renameSync(file, `${file}.${stamp}`);
    fd = openSync(file, 'a', 0o600);
    size = 0;
  };
  const log: ComponentLog = {
    line(message, stream = 'stderr') {
      if (fd === undefined) return;
      const t = formatTime(Date.now());
      const text = message.split('\n').filter((l, i, all) => l !== '' || i < all.length - 1)
        .map((l) => `${t} ${stream} F ${l}\n`).join('');
      try {
        size += writeSync(fd, text);
        if (size > ROTATE_BYTES) rotate();
      } catch {
        // dropped: see above
      }
    },
    close() {
      if (fd === undefined) return;
      closeSync(fd);
      fd = undefined;
      open.delete(key);
    },
  };
  open.set(key, log);
  return log;
}
