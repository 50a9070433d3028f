// What removes everything the iptables mode created, as upstream's CleanupLeftovers: delete the
// jumps from the built-in chains (`iptables -D`, a missing rule is not an error), then flush
// and delete kube-proxy's nat and filter chains in one restore per table. The existing chains
// come from `iptables-save -t nat` / `-t filter` output (parsed here).

import { parse, tablesOf } from '../../ruleset/iptables/parse.js';
import { isServiceChainName } from './chain-names.js';
import { JUMP_RULES } from './jump-chains.js';

export interface CleanupPlan {
  /** `-D` argument lists per table (run as `iptables -t TABLE -D FROM ...args`). */
  readonly deleteJumps: ReadonlyArray<{ table: string; from: string; args: readonly string[] }>;
  /** `iptables-restore --noflush` inputs, nat then filter; empty when nothing is left. */
  readonly restores: readonly string[];
}

function chainsOf(saveText: string, table: string): string[] {
  if (saveText.trim() === '') return [];
  const t = tablesOf(parse(saveText)).find((x) => x.name === table);
  return t ? t.chains.map((c) => c.name) : [];
}

function restore(table: string, chains: readonly string[]): string {
  if (chains.length === 0) return '';
  return [`*${table}`, ...chains.map((c) => `:${c} - [0:0]`), ...chains.map((c) => `-X ${c}`),
    'COMMIT', ''].join('\n');
}

/** Plans the cleanup from the current `iptables-save -t nat` and `-t filter` outputs. */
export function planCleanup(natSave: string, filterSave: string): CleanupPlan {
  // Upstream deletes its jumps with the comment always present (kubelet's KUBE-FIREWALL jumps
  // are not in this list and stay).
  const deleteJumps = JUMP_RULES.filter((j) => j.to !== 'KUBE-FIREWALL').map((j) => ({
    table: j.table, from: j.from, args: j.args,
  }));
  const nat = chainsOf(natSave, 'nat');
  const natGone = [
    // KUBE-MARK-MASQ: deleted too since ~v1.33 (reference §8.6).
    ...['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-MARK-MASQ']
      .filter((c) => nat.includes(c)),
    ...nat.filter(isServiceChainName).sort(),
  ];
  const filter = chainsOf(filterSave, 'filter');
  const filterGone = ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-FORWARD', 'KUBE-NODEPORTS']
    .filter((c) => filter.includes(c));
  return {
    deleteJumps,
    restores: [restore('nat', natGone), restore('filter', filterGone)].filter((t) => t !== ''),
  };
}
