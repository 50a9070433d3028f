// The kubelet's AtomicWriter (upstream pkg/volume/util/atomic_writer.go) for configMap, secret,
// downwardAPI and projected volumes: a reader inside the pod sees either the old set of files or
// the new one, never a mix. The files live in a timestamped directory `..2006_01_02_15_04_05.N`;
// `..data` is a symlink to it, swapped by rename(2); each user-visible top-level name is a symlink
// `name -> ..data/name`. A payload equal to what `..data` holds writes nothing.

import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, renameSync,
  rmSync, statSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { kdpError } from '../errors.js';

export interface PayloadFile {
  /** Relative path inside the volume (`key`, `sub/dir/key`). */
  readonly path: string;
  readonly data: Buffer;
  readonly mode: number;
}

const DATA = '..data';
const DATA_TMP = '..data_tmp';

function checkPath(p: string): void {
  const parts = p.split('/');
  if (!p || posix.isAbsolute(p) || parts.some((x) => x === '..' || x === '') || p.startsWith('..')) {
    throw kdpError('KDP_INVALID', `volume file path ${JSON.stringify(p)} must be relative, without '..' and not start with '..'`);
  }
}

/** Timestamp as upstream's directory names carry it (UTC, Go layout 2006_01_02_15_04_05). */
function stamp(now: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `..${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}_${p(now.getUTCHours())}_` +
    `${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}.`;
}

/** Whether `dir/..data` holds exactly `files` (paths, bytes and modes). */
function unchanged(dir: string, files: readonly PayloadFile[]): boolean {
  const data = join(dir, DATA);
  if (!existsSync(data)) return false;
  const have: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(join(d, e.name), r);
      else have.push(r);
    }
  };
  walk(data, '');
  if (have.length !== files.length) return false;
  return files.every((f) => {
    const p = join(data, f.path);
    try {
      return (statSync(p).mode & 0o7777) === f.mode && readFileSync(p).equals(f.data);
    } catch {
      return false;
    }
  });
}

/** Writes `files` into `dir` atomically; returns whether anything changed. */
export function writeAtomic(dir: string, files: readonly PayloadFile[], now = new Date()): boolean {
  for (const f of files) checkPath(f.path);
  mkdirSync(dir, { recursive: true });
  if (unchanged(dir, files)) return false;
  const old = existsSync(join(dir, DATA)) ? readlinkSync(join(dir, DATA)) : undefined;
  const ts = mkdtempSync(join(dir, stamp(now)));
  chmodSync(ts, 0o755);
  for (const f of files) {
    const p = join(ts, f.path);
    mkdirSync(dirname(p), { recursive: true, mode: 0o755 });
    writeFileSync(p, f.data, { mode: f.mode });
    chmodSync(p, f.mode);
  }
  rmSync(join(dir, DATA_TMP), { force: true });
  symlinkSync(posix.basename(ts), join(dir, DATA_TMP));
  renameSync(join(dir, DATA_TMP), join(dir, DATA)); // the swap readers see at once
  const top = new Set(files.map((f) => f.path.split('/')[0]!));
  for (const name of top) {
    const link = join(dir, name);
    let isLink = false;
    try { isLink = lstatSync(link).isSymbolicLink(); } catch { /* absent */ }
    if (!isLink) {
      rmSync(link, { recursive: true, force: true }); // a plain file left by an older layout
      symlinkSync(posix.join(DATA, name), link);
    }
  }
  // User-visible names no longer in the payload, and the previous timestamped directory.
  for (const e of readdirSync(dir)) {
    if (e.startsWith('..') || top.has(e)) continue;
    try {
      if (lstatSync(join(dir, e)).isSymbolicLink() && readlinkSync(join(dir, e)).startsWith(`${DATA}/`)) rmSync(join(dir, e));
    } catch { /* gone */ }
  }
  if (old && old !== posix.basename(ts)) rmSync(join(dir, old), { recursive: true, force: true });
  return true;
}
