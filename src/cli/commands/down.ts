// `kdp down`: stop the cluster of a data directory and remove what it made. Idempotent.

import { existsSync, rmSync } from 'node:fs';
import { clusterId, clusterPrefix } from '../../host/topology.js';
import { cleanupHost, stopProcesses } from '../../host/cleanup.js';
import { liveNodeAgents, nodeDirs, removeNodeAgentRecords } from '../../cluster/node-agent-records.js';
import { buildHostExec } from '../../host/exec.js';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { stopPid } from '../../cluster/daemon.js';
import type { Command } from '../command.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';

export const downCommand: Command = {
  name: 'down',
  summary: 'stop the cluster and remove everything it made (also after a crash)',
  exits: [
    { code: 0, meaning: 'stopped and removed (also when no cluster was running)' },
    { code: 1, meaning: 'something remains: kernel objects when not root (run `sudo kdp down`), or processes that ' +
      'survived SIGKILL (the data directory is kept, so `kdp down` can try again); or the command failed' },
  ],
  flags: [
    DATA_DIR_FLAG,
    { name: 'keep-data', type: 'boolean', default: false, help: 'keep the data directory (store, PKI, rule history)' },
  ],
  async run(args, io) {
    const paths = dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, io.env));
    const { stopped, survivor } = await stopPid(paths.pidFile);
    const survivors = survivor === undefined ? [] : [survivor];
    // Every `kdp node` / `kdp node join` of this data dir (also one in the real host's namespace,
    // which no namespace sweep finds), with its process group when it leads one.
    const agents = liveNodeAgents(paths.root);
    if (agents.length) {
      const r = await stopProcesses(agents, 2000);
      survivors.push(...r.survivors);
      io.err(`kdp: stopped node processes ${agents.map((a) => `${a.node} (pid ${a.pid})`).join(', ')}\n`);
    }
    // A local etcd cluster (kdp up --etcd N) outlives a crashed kdp up: its members go too.
    const { readEtcdLayout, stopEtcdMember } = await import('../../cluster/etcd-cluster.js');
    for (const m of readEtcdLayout(paths.root)?.members ?? []) await stopEtcdMember(paths.root, m.name, 'kill');
    // netns mode: every namespace and process of this cluster, also after a crash (SIGKILL).
    // The namespaces carry the cluster's prefix: hosts, router, nodes (their kdp-vxlan-* VTEPs
    // go with them); a joined node's own state file (nodes/<name>/host-state.json) is read too.
    const { joinedNodeStateFile } = await import('../../cluster/data-plane-netns.js');
    const stateFiles = [paths.hostState, ...nodeDirs(paths.root).map((n) => joinedNodeStateFile(paths, n))];
    if (process.getuid?.() === 0) {
      for (const file of stateFiles) {
        const r = await cleanupHost(buildHostExec(), file, clusterPrefix(clusterId(paths.root)));
        if (r.netnsDeleted.length) {
          io.err(`kdp: removed ${r.netnsDeleted.length} network namespaces, stopped ${r.processesStopped} processes\n`);
        }
        survivors.push(...r.survivors);
      }
    } else if (stateFiles.some((f) => existsSync(f))) {
      io.err(`kdp: ${stateFiles.find((f) => existsSync(f))} lists kernel objects; run \`sudo kdp down\` to remove them\n`);
      return 1;
    }
    if (survivors.length) {
      // Said, never hidden: the data directory stays, so a second `kdp down` can try again.
      io.err(`kdp: these processes did not end even after SIGKILL: ${survivors.join(', ')}\n`);
      return 1;
    }
    // Kept data keeps no claim of a process that is gone (the next node may take its address).
    removeNodeAgentRecords(paths.root);
    if (!args.flags['keep-data']) rmSync(paths.root, { recursive: true, force: true });
    io.out(stopped ? `kdp: cluster in ${paths.root} stopped and removed\n` : `kdp: no cluster was running in ${paths.root}; cleaned up\n`);
    return 0;
  },
};
