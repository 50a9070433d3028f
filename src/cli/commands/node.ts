// `kdp node stop|start|partition|crash NAME`: fail one node in a chosen way, or bring it back.
// The request goes through the API server (a Node annotation the hosting process acts on).

import { AGENT_ANNOTATION, type AgentState } from '../../cluster/agent-supervisor.js';
import { readClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { buildHttpClient } from '../../client/http-client.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import { kdpError } from '../../errors.js';
import type { Command } from '../command.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';

const VERB: Record<AgentState, { verb: string; summary: string; doing: string }> = {
  running: { verb: 'start', summary: 'bring a stopped, partitioned or crashed node back', doing: 'starting' },
  stopped: {
    verb: 'stop', doing: 'stopping',
    summary: 'stop a node\'s agent: heartbeats stop and the node-failure timeline plays out',
  },
  partitioned: {
    verb: 'partition', doing: 'partitioning',
    summary: 'cut a node off: its link down and its agent unreachable; its pods keep running',
  },
  crashed: {
    verb: 'crash', doing: 'crashing',
    summary: 'power a node off: every pod process killed, link down; `node start` boots it empty',
  },
};

function nodeAction(state: AgentState): Command {
  const v = VERB[state];
  return {
    name: `node ${v.verb}`,
    summary: v.summary,
    args: 'NAME',
    flags: [DATA_DIR_FLAG],
    async run(args, io) {
      const name = args.positionals[0];
      if (!name || args.positionals.length !== 1) throw kdpError('KDP_CONFIG', `usage: kdp node ${v.verb} NAME`);
      const info = readClusterInfo(dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, io.env)));
      if (!info.nodes.some((n) => n.name === name)) {
        throw kdpError('KDP_NOT_FOUND', `node ${name} is not one of ${info.nodes.map((n) => n.name).join(', ')}`);
      }
      const client = buildHttpClient(loadKubeconfig(info.kubeconfig));
      await client.patch({ group: '', version: 'v1', resource: 'nodes' }, name, 'merge',
        { metadata: { annotations: { [AGENT_ANNOTATION]: state } } });
      io.out(`node ${name}: ${v.doing}\n`);
      return 0;
    },
  };
}

export const nodeStopCommand = nodeAction('stopped');
export const nodeStartCommand = nodeAction('running');
export const nodePartitionCommand = nodeAction('partitioned');
export const nodeCrashCommand = nodeAction('crashed');
