// `kdp rules [--node N]` shows the tables a node's kube-proxy holds now (or at `@N`), and in
// netns mode the nat table kdp writes itself beside them (KDP-MASQ);
// `kdp rules history --node N` lists the numbered syncs kept, each with the Service ports it
// added (+), changed (~) or removed (-) against the sync before it (`--changes-only` hides the
// periodic syncs that changed nothing). When the last drift check found
// the kernel's rules differ from the compiled ones, or the last apply failed (the node keeps
// the rules of the last good one, which is what is shown), `kdp rules` warns on stderr.
// `kdp rules --netpol --node N` prints the node's NetworkPolicy table as its policy controller
// last applied it (the `nft -f` text kept in the data dir).

import { readClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { kdpError } from '../../errors.js';
import {
  listSnapshots, readApplyStatus, readDriftStatus, readSnapshot, rulesDir, type RuleSnapshotMeta,
} from '../../proxy/history.js';
import { serviceChanges, type ServiceChanges } from '../../diff/diff.js';
import { emptyText } from '../../diff/families.js';
import type { LoadedTable } from '../../diff/types.js';
import { parseCIDR } from '../../api/net.js';
import { KDP_MASQ_CHAIN, kdpMasqueradeTable } from '../../trace/kdp-masq.js';
import type { Command } from '../command.js';
import { errorSummary } from './status.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';
import { readNetpolTable } from '../../netpol/table-file.js';

const NODE_FLAG = { name: 'node', type: 'string', help: 'node name (default: the first node)' } as const;
const FAMILY_FLAG = { name: 'family', type: 'string', help: 'IPv4 | IPv6 (default: the cluster\'s primary family)' } as const;

function nodeDir(args: { flags: Record<string, unknown> }, env: Readonly<Record<string, string | undefined>>) {
  const paths = dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, env));
  const info = readClusterInfo(paths);
  const node = (args.flags.node as string | undefined) ?? info.nodes[0]!.name;
  if (!info.nodes.some((n) => n.name === node)) {
    throw kdpError('KDP_NOT_FOUND', `node ${node} is not one of ${info.nodes.map((n) => n.name).join(', ')}`);
  }
  return { dir: rulesDir(paths.root, node), node, info };
}

export const rulesShowCommand: Command = {
  name: 'rules',
  summary: 'show the rule tables a node\'s kube-proxy holds (now, or at a kept sync @N)',
  args: '[@N|@latest]',
  flags: [NODE_FLAG, FAMILY_FLAG, { name: 'output', short: 'o', type: 'string', help: 'json: with the origin of every chain' },
    { name: 'netpol', type: 'boolean', default: false, help: 'the node\'s NetworkPolicy table (inet kdp-netpol) as last applied' },
    DATA_DIR_FLAG],
  async run(args, io) {
    const { dir, node, info } = nodeDir(args, io.env);
    if (args.flags.netpol === true) {
      // The policy controller's table (issue 18): the `nft -f` text its last apply took.
      const text = readNetpolTable(dir);
      if (text === undefined) throw kdpError('KDP_NOT_FOUND', `node ${node} has no NetworkPolicy table yet (its policy controller has not applied one)`);
      io.out(text);
      return 0;
    }
    const family = (args.flags.family as 'IPv4' | 'IPv6' | undefined)
      ?? parseCIDR(info.clusterCIDRs?.[0] ?? '')?.family ?? 'IPv4';
    const snap = readSnapshot(dir, args.positionals[0] ?? '@latest', family);
    const drift = readDriftStatus(dir).find((d) => d.family === family);
    if (drift && !drift.inSync) {
      io.err(`warning: node ${node}'s kernel rules differ from what kube-proxy compiled ` +
        `(${drift.lastDrift?.count ?? 0} differences at ${drift.lastDrift?.time}):\n` +
        `${(drift.lastDrift?.differences ?? []).map((d) => `  ${d}\n`).join('')}`);
    }
    const apply = readApplyStatus(dir).find((a) => a.family === family);
    if (apply?.failed) {
      io.err(`warning: node ${node}'s kube-proxy could not apply its ${family} rules ` +
        `(${apply.failures} failure${apply.failures === 1 ? '' : 's'} in a row since ` +
        `${apply.since}; the node keeps the rules of the last good apply):\n` +
        `  ${errorSummary(apply.lastError?.message ?? '')}\n`);
    }
    // netns mode: the node's kernel also holds the nat table kdp writes itself (KDP-MASQ, with
    // iptables-nft); nftables mode's snapshot is kube-proxy's table alone, so it is shown after
    // it, as the tracer walks it. iptables mode's snapshot (all of iptables-save) lists it.
    const kdpTables = info.mode === 'netns' && !snap.text.includes(KDP_MASQ_CHAIN)
      ? kdpMasqueradeTable((info.clusterCIDRs ?? ['10.244.0.0/16'])
        .filter((c) => parseCIDR(c)?.family === family))
      : undefined;
    if (args.flags.output === 'json') {
      io.out(`${JSON.stringify(kdpTables ? { ...snap, kdpTables } : snap, null, 2)}\n`);
      return 0;
    }
    io.out(snap.text);
    if (kdpTables) {
      io.out(`\n# kdp's own tables in ${node}'s kernel (${family === 'IPv6' ? 'ip6tables' : 'iptables'}-nft, ` +
        `table ${family === 'IPv6' ? 'ip6' : 'ip'} nat):\n${kdpTables}`);
    }
    return 0;
  },
};

export const rulesHistoryCommand: Command = {
  name: 'rules history',
  summary: 'list the numbered kube-proxy syncs kept for a node, with the Services each changed',
  flags: [NODE_FLAG,
    { name: 'changes-only', type: 'boolean', default: false, help: 'hide the syncs that changed nothing (periodic full syncs)' },
    { name: 'output', short: 'o', type: 'string', help: 'json for machine-readable output' }, DATA_DIR_FLAG],
  async run(args, io) {
    const { dir, node } = nodeDir(args, io.env);
    const rows = syncChanges(dir).filter((r) => !args.flags['changes-only'] || r.changes.summary !== 'no change');
    if (args.flags.output === 'json') {
      io.out(`${JSON.stringify(rows.map((r) => ({ ...r.meta, changes: r.changes })), null, 2)}\n`);
      return 0;
    }
    io.out(`node ${node}\nSYNC   TIME                      MODE      FAMILY  FULL  CHANGES\n`);
    for (const { meta: s, changes } of rows) {
      io.out(`@${String(s.seq).padEnd(5)} ${s.time.padEnd(25)} ${s.mode.padEnd(9)} ${s.family.padEnd(7)} ` +
        `${(s.full ? 'yes' : 'no').padEnd(5)} ${changes.summary}\n`);
    }
    return 0;
  },
};

interface SyncChanges extends ServiceChanges {
  /** `+ns/a:p ~ns/b:p -ns/c:p`, `no change`, or `first kept sync (N Service ports)`. */
  readonly summary: string;
}

/** Each kept sync against the one before it of the same family (the first against nothing). */
function syncChanges(dir: string): Array<{ meta: RuleSnapshotMeta; changes: SyncChanges }> {
  const prev = new Map<string, LoadedTable>();
  return listSnapshots(dir).map((meta) => {
    const snap = readSnapshot(dir, `@${meta.seq}`, meta.family);
    const table: LoadedTable = { label: `@${meta.seq}`, format: snap.mode, text: snap.text,
      origins: new Map(Object.entries(snap.origins ?? {})) };
    const before = prev.get(meta.family);
    prev.set(meta.family, table);
    if (!before) {
      const all = serviceChanges({ ...table, text: emptyText(snap.mode) }, table);
      return { meta, changes: { ...all, summary: `first kept sync (${all.added.length} Service ports)` } };
    }
    const c = before.format === table.format ? serviceChanges(before, table)
      : { added: [], changed: [], removed: [] };
    const words = [...c.added.map((g) => `+${g}`), ...c.changed.map((g) => `~${g}`),
      ...c.removed.map((g) => `-${g}`)];
    const summary = before.format !== table.format ? `mode ${before.format} → ${table.format}`
      : words.length === 0 ? (before.text === table.text ? 'no change' : 'rules changed (no Service)')
        : words.length > 6 ? `${words.slice(0, 6).join(' ')} … (${words.length} Service ports)`
          : words.join(' ');
    return { meta, changes: { ...c, summary } };
  });
}
