// Where a cluster keeps its state. One data directory = one cluster; every command that talks to
// a running cluster takes `--data-dir` to pick it.

import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

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
