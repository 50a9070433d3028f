// Where a kube-proxy's compiled syncs go. An applier is atomic: a failed apply throws and leaves
// the rules it held before. Two implementations: in-memory (virtual mode; per-mode fakes that
// fail like the kernel) and kernel (netns mode, in src/host). `dump` answers "what does this
// node hold now", in the mode's own dump format — what `kdp rules`, `kdp trace` and `kdp diff`
// read.

import { FakeIptables } from '../host/fake-iptables.js';
import { applyTransaction } from '../ruleset/nftables/fake.js';
import { formatListText } from '../ruleset/nftables/list-text.js';
import { emptyRuleset, type NftRuleset } from '../ruleset/nftables/model.js';
import { parseTransaction } from '../ruleset/nftables/transaction.js';
import { formatArgs } from '../ruleset/iptables/format.js';
import type { ProxyMode, SyncResult } from './backend.js';
import { JUMP_RULES } from './iptables/jump-chains.js';
import { canonicalize as ipvsCanonicalize } from './ipvs/proxier.js';
import type { IPFamily } from './types.js';
import type { SysctlWrite } from './sysctls.js';

export interface RuleApplier {
  readonly mode: ProxyMode;
  apply(family: IPFamily, result: SyncResult): Promise<void>;
  dump(family: IPFamily): Promise<string>;
  /** Kernel appliers: how what the kernel holds (`kernelDump`, or a fresh dump) differs from
   *  what the applied syncs compiled; [] when it matches or cannot be judged. */
  drift?(family: IPFamily, kernelDump?: string): Promise<string[]>;
  /** Kernel appliers: re-applies, atomically, everything the applied syncs compiled (heals
   *  drift); rules that are not kube-proxy's are left alone. */
  restore?(family: IPFamily): Promise<void>;
  /** Kernel appliers: kube-proxy's start-up sysctls (sysctls.ts) in the node's namespace,
   *  before the first apply; returns what could not be set (logged, not fatal). */
  setSysctls?(writes: readonly SysctlWrite[]): Promise<string[]>;
}

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

export function buildMemoryApplier(mode: ProxyMode): RuleApplier {
  const iptables = new Map<IPFamily, FakeIptables>();
  const nft = new Map<IPFamily, NftRuleset>();
  const ipvs = new Map<IPFamily, string>();
  return {
    mode,
    async apply(family, result) {
      if (mode === 'nftables') {
        let rs = nft.get(family) ?? emptyRuleset();
        for (const a of result.artifacts) {
          // A chunked artifact is parsed piece by piece, without joining its text.
          if (a.kind === 'nft') rs = applyTransaction(rs, parseTransaction(a.chunks ?? a.text));
        }
        nft.set(family, rs);
        return;
      }
      if (mode === 'ipvs') {
        ipvs.set(family, result.artifacts.map((a) => ipvsCanonicalize(a)).join(''));
        return;
      }
      const fake = iptables.get(family) ?? new FakeIptables();
      const staged = new FakeIptables();
      staged.restore(fake.save());
      for (const a of result.artifacts) staged.restore(a.text);
      if (result.full) {
        staged.restore(jumpRuleRestoreInput({
          rule: (t, c, args) => staged.has(t, c, args),
          chain: (t, c) => staged.hasChain(t, c),
        }));
      }
      iptables.set(family, staged);
    },
    async dump(family) {
      if (mode === 'nftables') return formatListText(nft.get(family) ?? emptyRuleset());
      if (mode === 'ipvs') return ipvs.get(family) ?? '';
      return iptables.get(family)?.save() ?? '';
    },
  };
}
