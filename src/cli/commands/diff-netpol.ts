// `kdp diff --netpol A B`: two NetworkPolicy tables (`inet kdp-netpol`, as kdp compiles them):
// files, `-`, or a node's kept tables `@N`/`@latest`/`@latest~K` (--node). Pods are named from
// the tables' own maps and, when the data dir's cluster answers, from its Pods. Exit status as
// diff(1): 0 nothing opened or closed, 1 something did.

import type { Pod } from '../../api/types.js';
import { readClusterInfo } from '../../cluster/cluster-file.js';
import { dataDirPaths, resolveDataDir } from '../../cluster/data-dir.js';
import { buildHttpClient } from '../../client/http-client.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import { diffNetpolTables, renderNetpolDiff, type NetpolSide } from '../../diff/netpol.js';
import { kdpError } from '../../errors.js';
import { NETPOL_TABLE } from '../../netpol/nftables.js';
import { readNetpolSnapshot } from '../../netpol/table-file.js';
import { rulesDir } from '../../proxy/history.js';
import type { CliIO } from '../command.js';
import type { FlagValues } from '../flags.js';
import { readInput } from '../read-input.js';

/** Whether `text` is a kdp-netpol table (what `--netpol` reads; detected for files too). */
export const isNetpolText = (text: string): boolean =>
  text.includes(`add table inet ${NETPOL_TABLE}`);

export async function diffNetpol(flags: FlagValues, refs: readonly string[], io: CliIO,
  texts?: readonly (string | undefined)[]): Promise<number> {
  const sides: NetpolSide[] = [];
  for (const [i, ref] of refs.entries()) {
    if (ref.startsWith('@')) {
      const { node, dir } = nodeDir(flags, io);
      const s = readNetpolSnapshot(dir, ref);
      sides.push({ label: `node ${node} ${ref} (@${s.seq})`, text: s.text });
    } else {
      const text = texts?.[i] ?? await readInput(ref, 'input');
      if (!isNetpolText(text)) {
        throw kdpError('KDP_PARSE', `${ref === '-' ? '(stdin)' : ref}: not a kdp-netpol table ` +
          `(no "add table inet ${NETPOL_TABLE}")`);
      }
      sides.push({ label: ref === '-' ? '(stdin)' : ref, text });
    }
  }
  const d = diffNetpolTables(sides[0]!, sides[1]!, await clusterPods(flags, io));
  io.out(flags.output === 'json' ? `${JSON.stringify({ view: 'netpol', ...d }, null, 2)}\n`
    : renderNetpolDiff(d));
  return d.changes.length > 0 ? 1 : 0;
}

function nodeDir(flags: FlagValues, io: CliIO): { node: string; dir: string } {
  const paths = dataDirPaths(resolveDataDir(flags['data-dir'] as string | undefined, io.env));
  const info = readClusterInfo(paths);
  const node = (flags.node as string | undefined) ?? info.nodes[0]?.name ?? '';
  if (!info.nodes.some((n) => n.name === node)) {
    throw kdpError('KDP_DIFF', `node ${node} is not one of ${info.nodes.map((n) => n.name).join(', ')}`);
  }
  return { node, dir: rulesDir(paths.root, node) };
}

/** Pod IP → `ns/name` from the data dir's cluster; empty when there is none or it is down. */
async function clusterPods(flags: FlagValues, io: CliIO): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  try {
    const paths = dataDirPaths(resolveDataDir(flags['data-dir'] as string | undefined, io.env));
    const client = buildHttpClient(loadKubeconfig(readClusterInfo(paths).kubeconfig));
    for (const p of (await client.list<Pod>({ group: '', version: 'v1', resource: 'pods' })).items) {
      if (p.spec?.hostNetwork) continue;
      const name = `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`;
      for (const ip of p.status?.podIPs?.map((x) => x.ip) ?? [p.status?.podIP]) if (ip) out.set(ip, name);
    }
  } catch { /* no cluster to ask: addresses stay as the tables name them */ }
  return out;
}
