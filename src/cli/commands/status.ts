// `kdp status`: is a cluster running here, where, and how are its nodes?

import type { Node } from '../../api/types.js';
import { readClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { buildHttpClient } from '../../client/http-client.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import type { Command } from '../command.js';
import { DATA_DIR_FLAG } from './up.js';

export const statusCommand: Command = {
  name: 'status',
  summary: 'show the running cluster: API server, mode, nodes and their readiness',
  flags: [DATA_DIR_FLAG, { name: 'output', short: 'o', type: 'string', help: 'json for machine-readable output' }],
  async run(args, io) {
    const paths = dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, io.env));
    const info = readClusterInfo(paths);
    const client = buildHttpClient(loadKubeconfig(info.kubeconfig));
    const nodes = (await client.list<Node>({ group: '', version: 'v1', resource: 'nodes' })).items.map((n) => ({
      name: n.metadata.name!,
      ready: n.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown',
      podCIDR: n.spec?.podCIDR ?? '',
      ip: n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '',
    }));
    const status = { ...info, nodeStatus: nodes };
    if (args.flags.output === 'json') {
      io.out(`${JSON.stringify(status, null, 2)}\n`);
      return 0;
    }
    io.out(`cluster: ${info.url} (pid ${info.pid}, ${info.mode} mode, kube-proxy ${info.proxyMode}, time-scale ${info.timeScale})\n`);
    io.out(`kubeconfig: ${info.kubeconfig}\n\nNODE  READY    IP            POD CIDR\n`);
    for (const n of nodes) io.out(`${n.name.padEnd(5)} ${n.ready.padEnd(8)} ${n.ip.padEnd(13)} ${n.podCIDR}\n`);
    return 0;
  },
};
