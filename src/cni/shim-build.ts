// The native kdp-cni plugin (native/kdp-cni-shim.c) for one data dir: built with the data dir's
// socket directory, this Node and bin/kdp-cni.js compiled in, and linked as `kdp-cni` into
// `<data-dir>/bin/cni/`, a directory a runtime's CNI_PATH (containerd's bin_dir) can name.

import { lstatSync, readlinkSync, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildNative } from '../host/native-build.js';
import { ensurePrivateDirSync } from '../util/private-files.js';
import { KDP_CNI_SCRIPT } from './exec-plugin.js';

export const SHIM_SOURCE = fileURLToPath(new URL('../../native/kdp-cni-shim.c', import.meta.url));

/** Where node agents of this data dir listen: `<dir>/<node netns inode>.sock`. */
export function cniSocketDir(dataDir: string): string {
  return join(dataDir, 'run', 'cni');
}

/** The directory holding the `kdp-cni` plugin binary of this data dir. */
export function cniBinDir(dataDir: string): string {
  return join(dataDir, 'bin', 'cni');
}

export type CniShim = { readonly ok: true; readonly file: string } | { readonly ok: false; readonly reason: string };

export async function buildCniShim(dataDir: string, compilers?: readonly string[]): Promise<CniShim> {
  const built = await buildNative({
    source: SHIM_SOURCE, binDir: join(dataDir, 'bin'), name: 'kdp-cni-shim', compilers,
    defines: { KDP_CNI_SOCKET_DIR: cniSocketDir(dataDir), KDP_NODE: process.execPath, KDP_CNI_SCRIPT },
  });
  if (!built.ok) return built;
  const dir = cniBinDir(dataDir);
  ensurePrivateDirSync(dir);
  const link = join(dir, 'kdp-cni');
  let current: string | undefined;
  try { current = lstatSync(link).isSymbolicLink() ? readlinkSync(link) : undefined; } catch { /* none yet */ }
  if (current !== built.file) {
    const tmp = `${link}.${process.pid}.tmp`;
    symlinkSync(built.file, tmp);
    renameSync(tmp, link);
  }
  return { ok: true, file: link };
}
