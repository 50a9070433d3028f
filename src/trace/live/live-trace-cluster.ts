// What `--live` needs of a running cluster, checked up front: netns mode (a virtual cluster has
// no kernel path to send packets through), root (namespaces, tcpdump, kernel tracing), and the
// pods' UIDs (their namespaces and host veths are named after them).

import { join } from 'node:path';
import type { Pod } from '../../api/types.js';
import type { ClusterInfo } from '../../cluster/cluster-file.js';
import { hostPrefixFor } from '../../cluster/data-plane-netns.js';
import type { DataDirPaths } from '../../cluster/data-dir.js';
import type { Client } from '../../client/types.js';
import { kdpError } from '../../errors.js';
import { buildHostExec, type HostExec } from '../../host/exec.js';
import { proxyMode } from '../../proxy/registry.js';
import type { Topology } from '../topology.js';
import type { LiveCluster } from './live-trace.js';

const PODS = { group: '', version: 'v1', resource: 'pods' } as const;

export function assertLiveCapable(
  what: string, info: Pick<ClusterInfo, 'mode' | 'proxyMode'>, paths: DataDirPaths,
  uid: number | undefined = process.getuid?.(),
): void {
  if (info.mode !== 'netns') {
    throw kdpError('KDP_LIVE_VIRTUAL', `${what} --live: the cluster in ${paths.root} is virtual ` +
      '(no kernel to send packets through); start it in netns mode with `sudo kdp up`, ' +
      'or drop --live');
  }
  if (uid !== 0) {
    throw kdpError('KDP_NEEDS_ROOT', `${what} --live needs root: it captures with tcpdump and ` +
      'switches on the kernel\'s tracing inside the cluster\'s network namespaces ' +
      '(run it with sudo)');
  }
  if (!proxyMode(info.proxyMode).kernel) {
    throw kdpError('KDP_LIVE_VIRTUAL',
      `${what} --live: proxy mode ${info.proxyMode} has no kernel rules to trace`);
  }
}

export async function buildLiveCluster(o: {
  paths: DataDirPaths; info: ClusterInfo; client: Client; topo: Topology; exec?: HostExec;
}): Promise<LiveCluster> {
  const pods = (await o.client.list<Pod>(PODS)).items;
  const podUids = new Map<string, string>();
  for (const p of pods) {
    const name = `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`;
    if (p.metadata.uid) podUids.set(name, p.metadata.uid);
  }
  return {
    exec: o.exec ?? buildHostExec(), prefix: hostPrefixFor(o.paths), topo: o.topo, podUids,
    mode: o.info.proxyMode, tracesDir: join(o.paths.root, 'traces'),
  };
}
