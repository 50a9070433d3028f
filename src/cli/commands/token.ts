// `kdp token create|list|delete`: bootstrap tokens of a running cluster, as `kubeadm token`
// (cmd/kubeadm/app/cmd/token.go) — through the API with the data dir's admin kubeconfig (or
// --kubeconfig). `create --print-join-command` prints the whole `kdp node join` line.

import { existsSync } from 'node:fs';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { buildHttpClient, type HttpClient } from '../../client/http-client.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import { kdpError } from '../../errors.js';
import { goDurationMs } from '../../util/go-duration.js';
import type { Command } from '../command.js';
import type { FlagValues } from '../flags.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';

const KUBECONFIG_FLAG = { name: 'kubeconfig', type: 'string', help: 'admin kubeconfig (default <data-dir>/kubeconfig)' } as const;

function adminClient(flags: FlagValues, env: Readonly<Record<string, string | undefined>>):
  { client: HttpClient; server: string; caPem?: string } {
  const path = (flags.kubeconfig as string | undefined)
    ?? dataDirPaths(resolveDataDir(flags['data-dir'] as string | undefined, env)).kubeconfig;
  if (!existsSync(path)) throw kdpError('KDP_NOT_RUNNING', `no kubeconfig at ${path} (--kubeconfig, or start \`kdp up\`)`);
  const k = loadKubeconfig(path);
  return { client: buildHttpClient(k), server: k.server, ...(k.caPem ? { caPem: k.caPem } : {}) };
}

export const tokenCreateCommand: Command = {
  name: 'token create',
  summary: 'create a bootstrap token for `kdp node join` (kubeadm token create)',
  args: '[TOKEN]',
  flags: [
    { name: 'ttl', type: 'string', default: '24h0m0s', help: 'how long until the token expires; 0: never' },
    { name: 'description', type: 'string', help: 'a human-friendly description of the token' },
    { name: 'usages', type: 'string', default: 'signing,authentication', help: 'what the token may be used for: signing, authentication' },
    { name: 'groups', type: 'string', default: 'system:bootstrappers:kubeadm:default-node-token', help: 'extra groups the token authenticates as (comma-separated)' },
    { name: 'print-join-command', type: 'boolean', default: false, help: 'print the whole `kdp node join` command, not only the token' },
    KUBECONFIG_FLAG, DATA_DIR_FLAG,
  ],
  async run(args, io) {
    if (args.positionals.length > 1) throw kdpError('KDP_CONFIG', 'usage: kdp token create [TOKEN]');
    const ttlMs = goDurationMs(args.flags.ttl as string);
    if (ttlMs === undefined) throw kdpError('KDP_CONFIG', `--ttl: ${JSON.stringify(args.flags.ttl)} is not a duration (e.g. 24h, 30m, 0)`);
    const list = (f: string) => (args.flags[f] as string).split(',').map((s) => s.trim()).filter(Boolean);
    const { createToken, joinCommand } = await import('../../bootstrap/token-store.js');
    const { formatToken } = await import('../../bootstrap/token.js');
    const { client, server, caPem } = adminClient(args.flags, io.env);
    try {
      const token = await createToken(client, { ...(args.positionals[0] ? { token: args.positionals[0] } : {}),
        ttlMs, description: args.flags.description as string | undefined, usages: list('usages'),
        groups: list('groups') });
      if (args.flags['print-join-command']) {
        if (!caPem) throw kdpError('KDP_CONFIG', '--print-join-command: the kubeconfig names no cluster CA');
        const { readClusterJoinServer } = await import('../../bootstrap/cluster-info-read.js');
        io.out(`${joinCommand(await readClusterJoinServer(client) ?? server, token, caPem)}\n`);
      } else {
        io.out(`${formatToken(token)}\n`);
      }
    } finally {
      client.close();
    }
    return 0;
  },
};

export const tokenListCommand: Command = {
  name: 'token list',
  summary: 'list the bootstrap tokens (kubeadm token list)',
  flags: [KUBECONFIG_FLAG, DATA_DIR_FLAG],
  async run(args, io) {
    const { listTokens, formatTokenTable } = await import('../../bootstrap/token-store.js');
    const { client } = adminClient(args.flags, io.env);
    try {
      io.out(formatTokenTable(await listTokens(client)));
    } finally {
      client.close();
    }
    return 0;
  },
};

export const tokenDeleteCommand: Command = {
  name: 'token delete',
  summary: 'delete bootstrap tokens by id or whole token (kubeadm token delete)',
  args: 'ID...',
  flags: [KUBECONFIG_FLAG, DATA_DIR_FLAG],
  async run(args, io) {
    if (args.positionals.length === 0) throw kdpError('KDP_CONFIG', 'usage: kdp token delete ID...');
    const { deleteToken } = await import('../../bootstrap/token-store.js');
    const { client } = adminClient(args.flags, io.env);
    try {
      for (const t of args.positionals) io.out(`bootstrap token "${await deleteToken(client, t)}" deleted\n`);
    } finally {
      client.close();
    }
    return 0;
  },
};
