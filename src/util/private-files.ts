// Files kdp writes under a data directory hold secrets (Secret values in the WAL and snapshots,
// keys, tokens, kubeconfigs), so they are private to the owner: directories 0700, files 0600.
// Every writer goes through these helpers. Modes are set explicitly, never left to the umask
// (open/mkdir apply the umask to the mode they are given, so a file that already existed, or a
// directory made by someone else, is chmod-ed as well).
import {
  chmodSync, closeSync, fchmodSync, mkdirSync, openSync, renameSync, statSync, writeFileSync,
} from 'node:fs';
import {
  chmod, lstat, mkdir, open, readdir, rename, stat, writeFile, type FileHandle,
} from 'node:fs/promises';
import { join } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` (and missing parents) 0700; an existing `dir` is tightened to 0700. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  await chmod(dir, PRIVATE_DIR_MODE);
}

export function ensurePrivateDirSync(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(dir, PRIVATE_DIR_MODE);
}

/**
 * Writes `path` 0600 (replacing its content). The parent directory must exist; it is left as it
 * is (the data directory's own modes are the business of `ensureDataDir`). With `atomic`, the
 * text goes to `<path>.tmp` first and is renamed over `path`, so readers never see half a file.
 */
export async function writePrivateFile(
  path: string, data: string | Uint8Array, o: { atomic?: boolean } = {},
): Promise<void> {
  const target = o.atomic ? `${path}.tmp` : path;
  await writeFile(target, data, { mode: PRIVATE_FILE_MODE });
  await chmod(target, PRIVATE_FILE_MODE); // the file may have existed with a wider mode
  if (o.atomic) await rename(target, path);
}

export function writePrivateFileSync(
  path: string, data: string | Uint8Array, o: { atomic?: boolean; flag?: string } = {},
): void {
  const target = o.atomic ? `${path}.tmp` : path;
  writeFileSync(target, data, { mode: PRIVATE_FILE_MODE, flag: o.flag ?? 'w' });
  chmodSync(target, PRIVATE_FILE_MODE);
  if (o.atomic) renameSync(target, path);
}

/** `open(path, flags)` with mode 0600 whatever the umask (and if the file already existed). */
export async function openPrivate(path: string, flags: string | number): Promise<FileHandle> {
  const fh = await open(path, flags, PRIVATE_FILE_MODE);
  try {
    await fh.chmod(PRIVATE_FILE_MODE);
    return fh;
  } catch (e) {
    await fh.close().catch(() => undefined);
    throw e;
  }
}

export function openPrivateSync(path: string, flags: string | number): number {
  const fd = openSync(path, flags, PRIVATE_FILE_MODE);
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE);
    return fd;
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** Mode bits (permissions only) of `path`, or undefined when it does not exist. */
export async function modeOf(path: string): Promise<number | undefined> {
  return stat(path).then((s) => s.mode & 0o777, () => undefined);
}

export function modeOfSync(path: string): number | undefined {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return undefined;
  }
}

/** What `tightenModes` did: paths it changed, and paths it could not (owned by someone else). */
export interface Tightened {
  readonly changed: string[];
  readonly refused: string[];
}

/**
 * Removes group and other permissions from `dir`, and from the entries `include` accepts (all
 * by default; directories are descended into with `recursive`). Reports what it changed and what
 * it was not allowed to (EPERM: another user's file), so that callers can say so. Symbolic links
 * are left alone (chmod would follow them).
 */
export async function tightenModes(
  dir: string, o: { recursive?: boolean; include?: (name: string) => boolean } = {},
): Promise<Tightened> {
  const changed: string[] = [];
  const refused: string[] = [];
  const visit = async (path: string, isRoot: boolean): Promise<void> => {
    const st = await lstat(path).catch(() => undefined);
    if (!st || st.isSymbolicLink()) return;
    if ((st.isDirectory() || st.isFile()) && (st.mode & 0o077) !== 0) {
      try {
        await chmod(path, st.isDirectory() ? PRIVATE_DIR_MODE : st.mode & 0o700);
        changed.push(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EPERM') throw e;
        refused.push(path);
      }
    }
    if (!st.isDirectory() || (!isRoot && !o.recursive)) return;
    for (const name of await readdir(path)) {
      if (isRoot && o.include && !o.include(name)) continue;
      await visit(join(path, name), false);
    }
  };
  await visit(dir, true);
  return { changed, refused };
}
