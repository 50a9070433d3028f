// `kdp down`: stop the cluster of a data directory and remove what it made. Idempotent.

import { rmSync } from 'node:fs';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { stopPid } from '../../cluster/daemon.js';
import type { Command } from '../command.js';
import { DATA_DIR_FLAG } from './up.js';

export const downCommand: Command = {
  name: 'down',
  summary: 'stop the cluster and remove everything it made (also after a crash)',
  flags: [
    DATA_DIR_FLAG,
    { name: 'keep-data', type: 'boolean', default: false, help: 'keep the data directory (store, PKI, rule history)' },
  ],
  async run(args, io) {
    const paths = dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, io.env));
    const stopped = await stopPid(paths.pidFile);
    if (!args.flags['keep-data']) rmSync(paths.root, { recursive: true, force: true });
    io.out(stopped ? `kdp: cluster in ${paths.root} stopped and removed\n` : `kdp: no cluster was running in ${paths.root}; cleaned up\n`);
    return 0;
  },
};
