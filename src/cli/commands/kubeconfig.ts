// `kdp kubeconfig`: print the admin kubeconfig of a data directory (like `kind get kubeconfig`).

import { existsSync, readFileSync } from 'node:fs';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { kdpError } from '../../errors.js';
import type { Command } from '../command.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';

export const kubeconfigCommand: Command = {
  name: 'kubeconfig',
  summary: 'print the admin kubeconfig of the cluster (also written to <data-dir>/kubeconfig)',
  flags: [DATA_DIR_FLAG],
  async run(args, io) {
    const paths = dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, io.env));
    if (!existsSync(paths.kubeconfig)) {
      throw kdpError('KDP_NOT_RUNNING', `no kubeconfig in ${paths.root}: start a cluster with \`kdp up\` or \`kdp apiserver\``);
    }
    io.out(readFileSync(paths.kubeconfig, 'utf8'));
    return 0;
  },
};
