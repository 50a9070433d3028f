// `kdp down`: stop the cluster of a data directory and remove what it made. Idempotent.

import { existsSync, rmSync } from 'node:fs';
import { clusterId, clusterPrefix } from '../../host/topology.js';
import { cleanupHost } from '../../host/cleanup.js';
import { buildHostExec } from '../../host/exec.js';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { stopPid } from '../../cluster/daemon.js';
import type { Command } from '../command.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';

export const downCommand: Command = {
  name: 'down',
  summary: 'stop the cluster and remove everything it made (also after a crash)',
  flags: [
    DATA_DIR_FLAG,
    { name: 'keep-data', type: 'boolean', default: false, help: 'keep the data directory (store, PKI, rule history)' },
  ],
  async run(args, io) {
    const paths = dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, io.env));
    const { stopped, survivor } = await stopPid(paths.pidFile);
    const survivors = survivor === undefined ? [] : [survivor];
    // A local etcd cluster (kdp up --etcd N) outlives a crashed kdp up: its members go too.
    const { readEtcdLayout, stopEtcdMember } = await import('../../cluster/etcd-cluster.js');
    for (const m of readEtcdLayout(paths.root)?.members ?? []) await stopEtcdMember(paths.root, m.name, 'kill');
    // netns mode: every namespace and process of this cluster, also after a crash (SIGKILL).
    if (process.getuid?.() === 0) {
      const r = await cleanupHost(buildHostExec(), paths.hostState, clusterPrefix(clusterId(paths.root)));
      if (r.netnsDeleted.length) {
        io.err(`kdp: removed ${r.netnsDeleted.length} network namespaces, stopped ${r.processesStopped} processes\n`);
      }
      survivors.push(...r.survivors);
    } else if (existsSync(paths.hostState)) {
      io.err(`kdp: ${paths.hostState} lists kernel objects; run \`sudo kdp down\` to remove them\n`);
      return 1;
    }
    if (survivors.length) {
      // Said, never hidden: the data directory stays, so a second `kdp down` can try again.
      io.err(`kdp: these processes did not end even after SIGKILL: ${survivors.join(', ')}\n`);
      return 1;
    }
    if (!args.flags['keep-data']) rmSync(paths.root, { recursive: true, force: true });
    io.out(stopped ? `kdp: cluster in ${paths.root} stopped and removed\n` : `kdp: no cluster was running in ${paths.root}; cleaned up\n`);
    return 0;
  },
};
