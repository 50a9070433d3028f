// What upstream's kube-proxy does at start in a node's namespace before its first sync: the
// rules of the modes it is NOT running are removed (iptables mode cleans nftables' table,
// nftables mode cleans iptables' chains and jumps), so switching a node's mode (kubeadm:
// edit the kube-proxy ConfigMap, restart the DaemonSet) leaves one mode's rules. The plans are
// the proxiers' own (iptables/cleanup.ts, nftables/cleanup.ts); "already gone" is not an error.
// kdp's own tables (KDP-MASQ, kdp-netpol) are not kube-proxy's and stay.

import type { ProxyMode } from './backend.js';
import { planCleanup } from './iptables/cleanup.js';
import { cleanupArtifacts } from './nftables/cleanup.js';
import type { HostExec } from '../host/exec.js';
import { applyIptablesRestore, applyNft, iptablesSave, type IptablesFamily } from '../host/rules.js';

const IPTABLES: Record<IptablesFamily, string> = { ipv4: 'iptables', ipv6: 'ip6tables' };

/** Removes the other modes' kube-proxy rules in `netns`; returns what failed (logged, not fatal). */
export async function cleanupOtherModes(exec: HostExec, netns: string, mode: ProxyMode): Promise<string[]> {
  const problems: string[] = [];
  if (mode !== 'iptables') {
    for (const family of ['ipv4', 'ipv6'] as const) {
      let nat: string;
      let filter: string;
      try {
        nat = await iptablesSave(exec, netns, family, 'nat');
        filter = await iptablesSave(exec, netns, family, 'filter');
      } catch {
        continue; // no such family in this namespace
      }
      if (!/:KUBE-/.test(nat + filter)) continue;
      const plan = planCleanup(nat, filter);
      for (const j of plan.deleteJumps) {
        // A jump that is not there fails `-D`; that is the "already gone" case.
        await exec.run(IPTABLES[family], ['-w', '5', '-t', j.table, '-D', j.from, ...j.args], { netns })
          .catch(() => undefined);
      }
      for (const input of plan.restores) {
        await applyIptablesRestore(exec, netns, input, family)
          .catch((e: Error) => { problems.push(`${family} iptables cleanup: ${e.message}`); });
      }
    }
  }
  if (mode !== 'nftables') {
    for (const a of cleanupArtifacts()) {
      const [, family, table] = a.text.trim().split(/\s+/);
      const listed = await exec.run('nft', ['list', 'tables', family!], { netns }).catch(() => ({ stdout: '' }));
      if (!listed.stdout.split('\n').some((l) => l.trim() === `table ${family} ${table}`)) continue;
      await applyNft(exec, netns, a.text).catch((e: Error) => { problems.push(`nftables cleanup: ${e.message}`); });
    }
  }
  return problems;
}
