// `kdp node stop|start NAME`: stop or restart one node's agent (kubelet + kube-proxy). The
// request goes through the API server (a Node annotation the hosting process acts on).

import { AGENT_ANNOTATION } from '../../cluster/agent-supervisor.js';
import { readClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { buildHttpClient } from '../../client/http-client.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import { kdpError } from '../../errors.js';
import type { Command } from '../command.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';

function nodeAction(state: 'stopped' | 'running'): Command {
  return {
    name: `node ${state === 'stopped' ? 'stop' : 'start'}`,
    summary: state === 'stopped'
      ? 'stop a node\'s agent: heartbeats stop and the node-failure timeline plays out'
      : 'restart a stopped node\'s agent',
    args: 'NAME',
    flags: [DATA_DIR_FLAG],
    async run(args, io) {
      const name = args.positionals[0];
      if (!name || args.positionals.length !== 1) throw kdpError('KDP_CONFIG', 'usage: kdp node stop|start NAME');
      const info = readClusterInfo(dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, io.env)));
      if (!info.nodes.some((n) => n.name === name)) {
        throw kdpError('KDP_NOT_FOUND', `node ${name} is not one of ${info.nodes.map((n) => n.name).join(', ')}`);
      }
      const client = buildHttpClient(loadKubeconfig(info.kubeconfig));
      await client.patch({ group: '', version: 'v1', resource: 'nodes' }, name, 'merge',
        { metadata: { annotations: { [AGENT_ANNOTATION]: state } } });
      io.out(`node ${name}: agent ${state === 'stopped' ? 'stopping' : 'starting'}\n`);
      return 0;
    },
  };
}

export const nodeStopCommand = nodeAction('stopped');
export const nodeStartCommand = nodeAction('running');
