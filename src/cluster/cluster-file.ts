// cluster.json: written by a running `kdp up` once the API server listens; how every other
// command finds the cluster of a data directory.

import { existsSync, readFileSync } from 'node:fs';
import { writePrivateFileSync } from '../util/private-files.js';
import { kdpError } from '../errors.js';
import type { ProxyMode } from '../proxy/backend.js';
import type { DataDirPaths } from './data-dir.js';
import { livePid } from './daemon.js';
import type { NodeSpec } from './node-set.js';
import type { HostLayout } from '../host/hosts.js';
import type { Backend } from '../cni/backend.js';

export interface ClusterInfo {
  readonly url: string;
  readonly pid: number;
  readonly mode: 'virtual' | 'netns';
  readonly proxyMode: ProxyMode;
  readonly nodes: readonly NodeSpec[];
  readonly kubeconfig: string;
  readonly startedAt: string;
  readonly timeScale: number;
  /** Absent in files of older kdp versions (IPv4: 10.244.0.0/16, 10.96.0.0/12). */
  readonly ipFamily?: 'ipv4' | 'ipv6' | 'dual';
  readonly clusterCIDRs?: readonly string[];
  readonly serviceCIDRs?: readonly string[];
  /** `kdp up --hosts N` (more than one simulated host): where `kdp node --host K` attaches. */
  readonly hosts?: HostLayout;
  /** The pod network's backend (`--backend`); absent: host-gw. */
  readonly backend?: Backend;
}

export function writeClusterInfo(paths: DataDirPaths, info: ClusterInfo): void {
  writePrivateFileSync(paths.clusterFile, `${JSON.stringify(info, null, 2)}\n`, { atomic: true });
}

/** The running cluster of this data directory, or KDP_NOT_RUNNING. */
export function readClusterInfo(paths: DataDirPaths): ClusterInfo {
  if (!existsSync(paths.clusterFile) || livePid(paths.pidFile) === undefined) {
    throw kdpError('KDP_NOT_RUNNING', `no running cluster in ${paths.root} (start one with \`kdp up\`)`);
  }
  return JSON.parse(readFileSync(paths.clusterFile, 'utf8')) as ClusterInfo;
}
