// `kdp etcd status|stop|start`: the local etcd cluster of `kdp up --etcd N` — its members,
// leader, Raft term, revision and DB size, the quorum table for its size — and failing or
// restoring one member (`--kill` for a crash).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { kdpError } from '../../errors.js';
import type { Command } from '../command.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';

function rootOf(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): string {
  return dataDirPaths(resolveDataDir(flags['data-dir'] as string | undefined, env)).root;
}

async function layoutOf(root: string) {
  const { readEtcdLayout } = await import('../../cluster/etcd-cluster.js');
  const layout = readEtcdLayout(root);
  if (!layout) throw kdpError('KDP_NOT_FOUND', `no local etcd cluster in ${root} (start one with kdp up --etcd 3)`);
  return layout;
}

export const etcdStatusCommand: Command = {
  name: 'etcd status',
  summary: 'the local etcd cluster: members, leader, Raft term, revision, DB size, quorum',
  exits: [
    { code: 0, meaning: 'a quorum of members is up (writes go on)' },
    { code: 1, meaning: 'fewer than a quorum are up (no writes until a member returns), or the command failed' },
  ],
  flags: [DATA_DIR_FLAG, { name: 'output', short: 'o', type: 'string', help: 'json for machine-readable output' }],
  async run(args, io) {
    const root = rootOf(args.flags, io.env);
    const layout = await layoutOf(root);
    const { clientURL, quorumTable } = await import('../../cluster/etcd-cluster.js');
    const { Etcd3 } = await import('etcd3');
    const pki = join(root, 'pki');
    const credentials = { rootCertificate: readFileSync(join(pki, 'etcd', 'ca.crt')),
      certChain: readFileSync(join(pki, 'apiserver-etcd-client.crt')), privateKey: readFileSync(join(pki, 'apiserver-etcd-client.key')) };
    const rows = await Promise.all(layout.members.map(async (m) => {
      const c = new Etcd3({ hosts: clientURL(m), credentials, dialTimeout: 1000 });
      try {
        const s = await c.maintenance.status({ deadline: Date.now() + 1500 });
        return { member: m.name, endpoint: clientURL(m), up: true, id: BigInt(s.header.member_id).toString(16),
          leader: s.leader === s.header.member_id, raftTerm: Number(s.header.raft_term),
          revision: Number(s.header.revision), dbSize: Number(s.dbSize) };
      } catch (e) {
        return { member: m.name, endpoint: clientURL(m), up: false, error: (e as Error).message.split('\n')[0] };
      } finally {
        c.close();
      }
    }));
    const size = layout.members.length;
    const quorum = Math.floor(size / 2) + 1;
    const healthy = rows.filter((r) => r.up).length;
    if (args.flags.output === 'json') {
      io.out(`${JSON.stringify({ members: rows, size, quorum, healthy, writable: healthy >= quorum }, null, 2)}\n`);
      return healthy >= quorum ? 0 : 1;
    }
    io.out('MEMBER   ENDPOINT                 ID                LEADER  RAFT TERM  REVISION  DB SIZE\n');
    for (const r of rows) {
      io.out(r.up && 'id' in r
        ? `${r.member.padEnd(8)} ${r.endpoint.padEnd(24)} ${String(r.id).padEnd(17)} ${(r.leader ? 'yes' : 'no').padEnd(7)} ` +
          `${String(r.raftTerm).padEnd(10)} ${String(r.revision).padEnd(9)} ${(r.dbSize! / 1024).toFixed(0)} KiB\n`
        : `${r.member.padEnd(8)} ${r.endpoint.padEnd(24)} DOWN (${'error' in r ? r.error : ''})\n`);
    }
    io.out(`\n${healthy} of ${size} members up; quorum is ${quorum}: ` +
      `${healthy >= quorum ? 'writes go on' : 'no writes until a member returns'}\n${quorumTable(size)}\n`);
    return healthy >= quorum ? 0 : 1;
  },
};

function memberAction(verb: 'stop' | 'start'): Command {
  return {
    name: `etcd ${verb}`,
    summary: verb === 'stop' ? 'stop one member of the local etcd cluster (--kill: as a crash)'
      : 'start a stopped member of the local etcd cluster again',
    args: 'MEMBER',
    flags: [DATA_DIR_FLAG, ...(verb === 'stop' ? [{ name: 'kill', type: 'boolean' as const, default: false, help: 'SIGKILL, as a crash' }] : [])],
    async run(args, io) {
      const name = args.positionals[0];
      if (!name || args.positionals.length !== 1) throw kdpError('KDP_CONFIG', `usage: kdp etcd ${verb} MEMBER`);
      const root = rootOf(args.flags, io.env);
      const layout = await layoutOf(root);
      if (!layout.members.some((m) => m.name === name)) {
        throw kdpError('KDP_NOT_FOUND', `etcd member ${name} is not one of ${layout.members.map((m) => m.name).join(', ')}`);
      }
      const { startEtcdMember, stopEtcdMember } = await import('../../cluster/etcd-cluster.js');
      if (verb === 'stop') {
        const was = await stopEtcdMember(root, name, args.flags.kill ? 'kill' : 'term');
        io.out(was ? `etcd member ${name} stopped\n` : `etcd member ${name} was not running\n`);
      } else {
        const pid = startEtcdMember(root, layout, name);
        io.out(`etcd member ${name} started (pid ${pid})\n`);
      }
      return 0;
    },
  };
}

export const etcdStopCommand = memberAction('stop');
export const etcdStartCommand = memberAction('start');

export const etcdSnapshotSaveCommand: Command = {
  name: 'etcd snapshot save',
  summary: 'back up the local etcd cluster\'s state into FILE (etcdctl snapshot save)',
  args: 'FILE',
  flags: [DATA_DIR_FLAG],
  async run(args, io) {
    const file = args.positionals[0];
    if (!file || args.positionals.length !== 1) throw kdpError('KDP_CONFIG', 'usage: kdp etcd snapshot save FILE');
    const { saveEtcdSnapshot } = await import('../../cluster/etcd-cluster.js');
    const member = await saveEtcdSnapshot(rootOf(args.flags, io.env), file);
    io.out(`snapshot of the etcd cluster saved in ${file} (from ${member})\n`);
    return 0;
  },
};

export const etcdSnapshotRestoreCommand: Command = {
  name: 'etcd snapshot restore',
  summary: 'restore FILE into a new data directory as a fresh etcd cluster; then kdp up --etcd N from it',
  args: 'FILE',
  flags: [DATA_DIR_FLAG, { name: 'etcd', type: 'number', default: 3, help: 'members of the restored cluster (1, 3 or 5)' }],
  async run(args, io) {
    const file = args.positionals[0];
    if (!file || args.positionals.length !== 1) throw kdpError('KDP_CONFIG', 'usage: kdp etcd snapshot restore FILE --data-dir NEW');
    const root = rootOf(args.flags, io.env);
    const { restoreEtcdSnapshot } = await import('../../cluster/etcd-cluster.js');
    const layout = await restoreEtcdSnapshot(file, root, args.flags.etcd as number);
    io.out(`restored ${file} into ${root} as ${layout.members.length} member(s); start it with\n` +
      `  kdp up --etcd ${layout.members.length} --data-dir ${root}\n`);
    return 0;
  },
};
