// `kdp diff A B`: what changed between two rule tables — dumps (files or `-`), or kept
// snapshots of a node (`@N`, `@latest`, `@latest~K` with --node). Exit status as diff(1):
// 0 same, 1 different, 2 trouble (every error, whatever its code: errorStatus).

import { readClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { kdpError } from '../../errors.js';
import { readSnapshot, rulesDir } from '../../proxy/history.js';
import { runDiff, type DiffView } from '../../diff/diff.js';
import { checkTable, detectFormat } from '../../diff/load.js';
import { isProxyMode, proxyModeNames } from '../../proxy/registry.js';
import type { DiffFormat, LoadedTable } from '../../diff/types.js';
import type { CliIO, Command } from '../command.js';
import type { FlagValues } from '../flags.js';
import { readInput } from '../read-input.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';

export const diffCommand: Command = {
  name: 'diff',
  summary: 'compare two rule tables by Service (default), by rules, or by packet behaviour',
  args: 'A B   (files, - for stdin, or @N/@latest/@latest~K with --node)',
  errorStatus: 2,
  exits: [
    { code: 0, meaning: 'the two tables behave the same (no Service, rule, flow or policy cell differs)' },
    { code: 1, meaning: 'they differ' },
  ],
  flags: [
    { name: 'format', type: 'string',
      help: 'iptables | nftables | ipvs, or A,B (default: detected)' },
    { name: 'rules', type: 'boolean', help: 'show a unified diff of the normalised rules' },
    { name: 'behaviour', type: 'boolean',
      help: 'trace probe packets over both tables; report flows that differ' },
    { name: 'node', type: 'string',
      help: 'node whose kept snapshots @N name (default: the first node)' },
    { name: 'family', type: 'string', default: 'IPv4', help: 'IPv4 | IPv6 (snapshots)' },
    { name: 'node-ip', type: 'strings',
      help: 'the node\'s addresses (NodePort probes; default for snapshots: the cluster\'s node)' },
    { name: 'pod-cidr', type: 'strings',
      help: 'pod CIDRs of the node (probe sources; default 10.244.0.0/24)' },
    { name: 'netpol', type: 'boolean',
      help: 'NetworkPolicy tables (inet kdp-netpol; detected in files): which pod pairs and ports ' +
        'opened or closed, and by which policy; @N names the node\'s kept policy tables' },
    { name: 'output', short: 'o', type: 'string', help: 'json for machine-readable output' },
    DATA_DIR_FLAG,
  ],
  run: (args, io) => diff(args.flags, args.positionals, io),
};

async function diff(flags: FlagValues, positionals: readonly string[], io: CliIO): Promise<number> {
  if (positionals.length !== 2) throw kdpError('KDP_DIFF', 'usage: kdp diff A B');
  const netpol = await netpolInputs(flags, positionals);
  if (netpol) {
    const { diffNetpol } = await import('./diff-netpol.js');
    return diffNetpol(flags, positionals, io, netpol.texts);
  }
  if (flags.rules && flags.behaviour) {
    throw kdpError('KDP_DIFF', '--rules and --behaviour: pick one view');
  }
  const formats = parseFormats(flags.format as string | undefined);
  const ctx = { flags, io, nodeIPs: [] as string[] };
  const a = await loadTable(positionals[0]!, formats[0], ctx);
  const b = await loadTable(positionals[1]!, formats[1], ctx);
  const view: DiffView = flags.behaviour ? 'behaviour' : flags.rules ? 'rules' : 'semantic';
  const nodeIPs = (flags['node-ip'] as string[] | undefined) ?? ctx.nodeIPs;
  const out = runDiff(a, b, {
    view, json: flags.output === 'json', colour: io.isTTY, nodeIPs,
    podCIDRs: (flags['pod-cidr'] as string[] | undefined) ?? [],
  });
  io.out(out.text);
  return out.status;
}

/** `--netpol`, or two files that are both kdp-netpol tables (read once here, handed on). */
async function netpolInputs(flags: FlagValues, refs: readonly string[]):
  Promise<{ texts: (string | undefined)[] } | undefined> {
  if (flags.netpol) return { texts: [] };
  if (refs.some((r) => r === '-' || r.startsWith('@'))) return undefined;
  const texts = await Promise.all(refs.map((r) => readInput(r, 'input').catch(() => '')));
  return texts.every((t) => t.includes('add table inet kdp-netpol')) ? { texts } : undefined;
}

function parseFormats(text: string | undefined): [DiffFormat | undefined, DiffFormat | undefined] {
  if (!text) return [undefined, undefined];
  const parts = text.split(',');
  for (const p of parts) {
    if (!isProxyMode(p)) {
      throw kdpError('KDP_CONFIG', `--format ${text}: expected ${proxyModeNames().join(' | ')} (or A,B)`);
    }
  }
  return [parts[0] as DiffFormat, (parts[1] ?? parts[0]) as DiffFormat];
}

interface LoadContext {
  readonly flags: FlagValues;
  readonly io: CliIO;
  /** Filled from the cluster when a snapshot is read. */
  nodeIPs: string[];
}

async function loadTable(ref: string, format: DiffFormat | undefined, ctx: LoadContext):
  Promise<LoadedTable> {
  if (ref.startsWith('@')) return loadSnapshot(ref, ctx);
  const text = await readInput(ref, 'input');
  const label = ref === '-' ? '(stdin)' : ref;
  const table: LoadedTable = { label, text, format: format ?? detectFormat(text, label) };
  // An empty file is a table only when its format was given (detection refuses it).
  checkTable(table, { allowEmpty: format !== undefined });
  return table;
}

function loadSnapshot(ref: string, ctx: LoadContext): LoadedTable {
  const dataDir = ctx.flags['data-dir'] as string | undefined;
  const paths = dataDirPaths(resolveDataDir(dataDir, ctx.io.env));
  const info = readClusterInfo(paths);
  const name = (ctx.flags.node as string | undefined) ?? info.nodes[0]?.name;
  const node = info.nodes.find((n) => n.name === name);
  if (!node) {
    const names = info.nodes.map((n) => n.name).join(', ');
    throw kdpError('KDP_DIFF', `node ${name} is not one of ${names}`);
  }
  const family = ctx.flags.family as 'IPv4' | 'IPv6';
  const snap = readSnapshot(rulesDir(paths.root, node.name), ref, family);
  ctx.nodeIPs = [node.ip];
  return {
    label: `node ${node.name} ${ref} (@${snap.seq})`, text: snap.text, format: snap.mode,
    origins: new Map(Object.entries(snap.origins ?? {})),
  };
}
