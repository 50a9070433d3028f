// `kdp ui`: prints a one-time login link to the running cluster's web UI (served by the API
// server at /ui/). It opens nothing: paste the link in a browser.

import { readClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import type { Command } from '../command.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';

export const uiCommand: Command = {
  name: 'ui',
  summary: 'print a one-time login link to the web UI (topology, trace, rules, events, logs); opens nothing',
  flags: [
    { name: 'output', short: 'o', type: 'string', help: 'json for machine-readable output' },
    DATA_DIR_FLAG,
  ],
  async run(args, io) {
    const paths = dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, io.env));
    const info = readClusterInfo(paths);
    const { requestUiLink } = await import('../../ui/server/link-client.js');
    const link = await requestUiLink(info.kubeconfig);
    if (args.flags.output === 'json') {
      io.out(`${JSON.stringify({ url: link.url, expiresAt: link.expiresAt })}\n`);
    } else {
      io.out(`${link.url}\n`);
      io.err(`kdp: one-time link, valid until ${link.expiresAt}; it opens a read-only session ` +
        'as your kubeconfig\'s user (the UI also accepts that user\'s bearer token)\n');
    }
    return 0;
  },
};
