// Where a cluster keeps its state. One data directory = one cluster; every command that talks to
// a running cluster takes `--data-dir` to pick it.

import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { PRIVATE_DIR_MODE, tightenModes } from '../util/private-files.js';

export interface DataDirPaths {
  readonly root: string;
  /** The embedded store (WAL + snapshots). */
  readonly store: string;
  /** CA, server and admin certificates, token file. */
  readonly pki: string;
  /** Written by `kdp up` once the API server listens: how to reach it. */
  readonly clusterFile: string;
  readonly pidFile: string;
  readonly logFile: string;
  readonly kubeconfig: string;
  /** Kernel objects made in netns mode (see src/host). */
  readonly hostState: string;
}

/** `--data-dir`, else $KDP_DATA_DIR, else ~/.kdp. */
export function resolveDataDir(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  return resolve(flag ?? env.KDP_DATA_DIR ?? join(homedir(), '.kdp'));
}

export function dataDirPaths(root: string): DataDirPaths {
  return {
    root,
    store: join(root, 'store'),
    pki: join(root, 'pki'),
    clusterFile: join(root, 'cluster.json'),
    pidFile: join(root, 'kdp.pid'),
    logFile: join(root, 'kdp.log'),
    kubeconfig: join(root, 'kubeconfig'),
    hostState: join(root, 'host-state.json'),
  };
}

/**
 * Creates the data directory (0700), or makes an existing one private: it holds Secret values
 * (store), keys and tokens, so nothing under it keeps group or other access (directories become
 * 0700, files lose their group/other bits; symbolic links are left alone). Says so through `log`
 * when it had to change anything. Every command that starts a cluster or an API server runs it
 * before writing; the writers themselves create 0600 files (src/util/private-files.ts).
 */
export async function ensureDataDir(root: string, log: (line: string) => void): Promise<void> {
  await mkdir(root, { recursive: true, mode: PRIVATE_DIR_MODE });
  const { changed, refused } = await tightenModes(root, { recursive: true });
  const shown = (ps: string[]) => ps.slice(0, 3).map((p) => p.slice(root.length + 1) || '.')
    .join(', ') + (ps.length > 3 ? ', ...' : '');
  if (changed.length > 0) {
    log(`data dir ${root}: removed group/other access from ${changed.length} ` +
      `file(s) and directories (${shown(changed)}); it holds secrets`);
  }
  if (refused.length > 0) {
    log(`data dir ${root}: WARNING: ${refused.length} file(s) and directories belong to another ` +
      `user and stay readable by others (${shown(refused)}); chown or remove them`);
  }
}
