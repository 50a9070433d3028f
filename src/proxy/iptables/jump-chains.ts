// The jumps from built-in chains into kube-proxy's chains. Upstream ensures them one by one
// (`iptables -C` / `-I`, prepend, no-op when present) on every full sync, outside the restore
// input; the applier does the same when a SyncResult is `full`. Order as upstream: on a fresh
// node the last entry processed ends up first in its built-in chain.

import { formatArgs } from '../../ruleset/iptables/format.js';

export interface JumpRule {
  readonly table: 'filter' | 'nat';
  /** Built-in chain the rule is inserted into. */
  readonly from: string;
  /** kube-proxy chain it jumps to (also ensured to exist). */
  readonly to: string;
  /** Rule arguments after `-I <from>`. */
  readonly args: readonly string[];
}

const NEW = ['-m', 'conntrack', '--ctstate', 'NEW'];
const EXT = 'kubernetes externally-visible service portals';

function jump(table: JumpRule['table'], to: string, from: string, comment: string,
  extra: readonly string[] = []): JumpRule {
  const c = comment === '' ? [] : ['-m', 'comment', '--comment', comment];
  return { table, from, to, args: [...extra, ...c, '-j', to] };
}

/** Processed in this order, each prepended if missing. Comments are single args (unquoted). */
export const JUMP_RULES: readonly JumpRule[] = [
  jump('filter', 'KUBE-EXTERNAL-SERVICES', 'INPUT', EXT, NEW),
  jump('filter', 'KUBE-EXTERNAL-SERVICES', 'FORWARD', EXT, NEW),
  jump('filter', 'KUBE-NODEPORTS', 'INPUT', 'kubernetes health check service ports'),
  jump('filter', 'KUBE-SERVICES', 'FORWARD', 'kubernetes service portals', NEW),
  jump('filter', 'KUBE-SERVICES', 'OUTPUT', 'kubernetes service portals', NEW),
  jump('filter', 'KUBE-FORWARD', 'FORWARD', 'kubernetes forwarding rules'),
  jump('filter', 'KUBE-PROXY-FIREWALL', 'INPUT', 'kubernetes load balancer firewall', NEW),
  jump('filter', 'KUBE-PROXY-FIREWALL', 'OUTPUT', 'kubernetes load balancer firewall', NEW),
  jump('filter', 'KUBE-PROXY-FIREWALL', 'FORWARD', 'kubernetes load balancer firewall', NEW),
  jump('nat', 'KUBE-SERVICES', 'OUTPUT', 'kubernetes service portals'),
  jump('nat', 'KUBE-SERVICES', 'PREROUTING', 'kubernetes service portals'),
  jump('nat', 'KUBE-POSTROUTING', 'POSTROUTING', 'kubernetes postrouting rules'),
  // kubelet's chain, duplicated by kube-proxy (never cleaned up by it).
  jump('filter', 'KUBE-FIREWALL', 'INPUT', ''),
  jump('filter', 'KUBE-FIREWALL', 'OUTPUT', ''),
];

/** The `-I` lines that ensure upstream's jumps from built-in chains (full syncs). */
export function jumpRuleRestoreInput(have: {
  rule(table: string, chain: string, args: string): boolean;
  chain(table: string, chain: string): boolean;
}): string {
  const out: string[] = [];
  for (const table of ['filter', 'nat']) {
    const mine = JUMP_RULES.filter((j) => j.table === table && !have.rule(table, j.from, formatArgs(j.args)));
    if (mine.length === 0) continue;
    // Declaring a chain in restore input flushes it: declare only the missing ones.
    const missing = new Set(mine.map((j) => j.to).filter((c) => !have.chain(table, c)));
    out.push(`*${table}`, ...[...missing].map((c) => `:${c} - [0:0]`));
    // Each is prepended in turn, so the last processed ends on top.
    for (const j of mine) out.push(`-I ${j.from} 1 ${formatArgs(j.args)}`);
    out.push('COMMIT');
  }
  return out.length ? `${out.join('\n')}\n` : '';
}
