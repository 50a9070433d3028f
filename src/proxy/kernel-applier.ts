// The kernel RuleApplier of netns mode: kube-proxy's compiled syncs applied inside a node's
// namespace. iptables: each artifact is one `iptables-restore --noflush` (atomic per call), and
// on full syncs upstream's jumps from the built-in chains are ensured from what `iptables-save`
// shows. nftables: each artifact is one `nft -f -` transaction. A failed apply throws and the
// kernel keeps the previous rules. ipvs needs the IP_VS module, which kdp does not load: it is
// refused up front (`assertKernelMode`). Every sync the kernel accepted is also applied to an
// in-memory shadow (the fakes of virtual mode), so `drift` can compare what was compiled with
// what the kernel lists back (rule-drift.ts).

import { kdpError } from '../errors.js';
import type { RuleApplier } from './applier.js';
import { buildMemoryApplier, jumpRuleRestoreInput } from './applier.js';
import type { ProxyMode } from './backend.js';
import type { IPFamily } from './types.js';
import type { HostExec } from '../host/exec.js';
import { dumpOps } from '../ruleset/nftables/fake.js';
import { parseListText } from '../ruleset/nftables/list-text.js';
import { formatTransaction } from '../ruleset/nftables/transaction.js';
import { iptablesDrift, nftDrift } from '../host/rule-drift.js';
import { applySysctls } from '../host/sysctls.js';
import { applyIptablesRestore, applyNft, iptablesSave, nftList, type IptablesFamily } from '../host/rules.js';

/** Throws KDP_CONFIG for modes the kernel data plane cannot apply. */
export function assertKernelMode(mode: ProxyMode): void {
  if (mode === 'ipvs') {
    throw kdpError('KDP_CONFIG', '--mode ipvs: netns mode cannot apply ipvs (kdp does not load the IP_VS ' +
      'kernel module); use --mode iptables or nftables, or --virtual to compile ipvs rules only');
  }
}

const FAMILY: Record<IPFamily, IptablesFamily> = { IPv4: 'ipv4', IPv6: 'ipv6' };
const NFT_FAMILY: Record<IPFamily, string> = { IPv4: 'ip', IPv6: 'ip6' };

export function buildKernelApplier(exec: HostExec, netns: string, mode: ProxyMode): RuleApplier {
  assertKernelMode(mode);
  const shadow = buildMemoryApplier(mode);
  /** Families whose shadow refused a sync the kernel took: their drift cannot be judged. */
  const unjudged = new Set<IPFamily>();
  const dump = async (family: IPFamily) => {
    if (mode === 'iptables') return iptablesSave(exec, netns, FAMILY[family]);
    try {
      return await nftList(exec, netns, ['list', 'table', NFT_FAMILY[family], 'kube-proxy']);
    } catch {
      return ''; // no table yet
    }
  };
  async function ensureJumps(family: IPFamily): Promise<void> {
    const saved = parseSave(await iptablesSave(exec, netns, FAMILY[family]));
    const input = jumpRuleRestoreInput({
      rule: (t, c, args) => saved.rules.has(`${t} ${c} ${args}`),
      chain: (t, c) => saved.chains.has(`${t} ${c}`),
    });
    if (input) await applyIptablesRestore(exec, netns, input, FAMILY[family]);
  }

  return {
    mode,
    dump,
    setSysctls: (writes) => applySysctls(exec, netns, writes),
    async restore(family) {
      const want = await shadow.dump(family);
      if (!want.trim()) return;
      if (mode === 'nftables') {
        // Re-created in one transaction: add (so delete cannot fail), delete, then everything.
        const t = `${NFT_FAMILY[family]} kube-proxy`;
        await applyNft(exec, netns, `add table ${t}\ndelete table ${t}\n` +
          formatTransaction(dumpOps(parseListText(want))));
        return;
      }
      await applyIptablesRestore(exec, netns, kubeChainsOnly(want), FAMILY[family]);
      await ensureJumps(family);
    },
    async drift(family, kernelDump) {
      if (unjudged.has(family)) return [];
      const [want, have] = [await shadow.dump(family), kernelDump ?? await dump(family)];
      return mode === 'iptables' ? iptablesDrift(want, have) : nftDrift(want, have);
    },
    async apply(family, result) {
      for (const a of result.artifacts) {
        // Chunked artifacts go to stdin piece by piece (no flat copy of a large first sync).
        const input = a.chunks ?? a.text;
        if (mode === 'nftables') await applyNft(exec, netns, input);
        else await applyIptablesRestore(exec, netns, input, FAMILY[family]);
      }
      if (mode === 'iptables' && result.full) await ensureJumps(family);
      try {
        await shadow.apply(family, result);
        if (result.full) unjudged.delete(family);
      } catch {
        unjudged.add(family);
      }
    },
  };
}

/** `table chain args` of every rule and `table chain` of every chain in iptables-save output. */
function parseSave(text: string): { rules: Set<string>; chains: Set<string> } {
  const rules = new Set<string>();
  const chains = new Set<string>();
  let table = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1).trim();
    else if (line.startsWith(':')) chains.add(`${table} ${line.slice(1).split(' ')[0]}`);
    else if (line.startsWith('-A ')) {
      const rest = line.slice(3);
      const sp = rest.indexOf(' ');
      rules.add(`${table} ${rest.slice(0, sp)} ${rest.slice(sp + 1)}`);
    }
  }
  return { rules, chains };
}

/** The KUBE-* chains of an iptables-save text (declaring them flushes them in restore input). */
function kubeChainsOnly(text: string): string {
  const out = text.split('\n').filter((l) => l.startsWith('*') || l === 'COMMIT' ||
    l.startsWith(':KUBE-') || l.startsWith('-A KUBE-'));
  return `${out.join('\n')}\n`;
}
