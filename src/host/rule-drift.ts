// Drift between what kube-proxy compiled (the state an in-memory applier reaches from the same
// syncs) and what a node's kernel lists back. Each difference is one line naming the table,
// chain (or set) and what differs; an empty list means the kernel holds what was compiled.
// iptables: kube-proxy's chains (KUBE-*) must match rule for rule; in the built-in chains, the
// jumps kube-proxy added must be there (others — kdp's own masquerade — are not its business).
// nftables: kube-proxy's table compared after normalising what the kernel rewrites.

import { parseListText } from '../ruleset/nftables/list-text.js';
import { diffRulesets, normalizeRuleset } from '../ruleset/nftables/normalize.js';
import { normaliseChains } from './iptables-normalise.js';

const OWNED = /^[a-z]+\/KUBE-/;

export function iptablesDrift(expected: string, kernel: string): string[] {
  const want = normaliseChains(expected);
  const have = normaliseChains(kernel);
  const out: string[] = [];
  for (const [chain, rules] of want) {
    const got = have.get(chain);
    if (!got) { out.push(`chain ${chain}: missing from the kernel`); continue; }
    if (OWNED.test(chain)) {
      if (got.join('\n') !== rules.join('\n')) out.push(...chainDiff(chain, rules, got));
    } else {
      for (const r of rules) if (!got.includes(r)) out.push(`chain ${chain}: rule missing: ${r}`);
    }
  }
  for (const chain of have.keys()) {
    if (OWNED.test(chain) && !want.has(chain)) {
      out.push(`chain ${chain}: not compiled (only in the kernel)`);
    }
  }
  return out;
}

function chainDiff(chain: string, want: readonly string[], got: readonly string[]): string[] {
  const out: string[] = [];
  for (const r of want) if (!got.includes(r)) out.push(`chain ${chain}: rule missing: ${r}`);
  for (const r of got) if (!want.includes(r)) out.push(`chain ${chain}: rule not compiled: ${r}`);
  if (out.length === 0) out.push(`chain ${chain}: rules in a different order or repeated`);
  return out;
}

export function nftDrift(expected: string, kernel: string): string[] {
  const want = normalizeRuleset(parseListText(expected));
  const have = normalizeRuleset(parseListText(kernel));
  return diffRulesets(want, have);
}
