// The nftables mode's registry entry (../registry.ts): its compiler, the in-memory ruleset of
// virtual mode, the `nft` commands of netns mode, the dump checks, the tracer's filter and the
// diff's reader.

import { nftSections } from '../../diff/families.js';
import { nftablesFacts } from '../../diff/nftables-facts.js';
import { reduceNftPair } from '../../diff/nftables-reduce.js';
import { normaliseNft } from '../../diff/normalise.js';
import { nftTargets } from '../../diff/quick-targets.js';
import type { HostExec } from '../../host/exec.js';
import { nftDrift } from '../../host/rule-drift.js';
import { applyNft, nftList } from '../../host/rules.js';
import { applyTransaction, dumpOps } from '../../ruleset/nftables/fake.js';
import { formatListText, parseListText } from '../../ruleset/nftables/list-text.js';
import { emptyRuleset } from '../../ruleset/nftables/model.js';
import { normalizeRuleset } from '../../ruleset/nftables/normalize.js';
import { formatTransaction, parseTransaction } from '../../ruleset/nftables/transaction.js';
import { validateNftText } from '../../ruleset/nftables/validate.js';
import { buildNftFilter, parseNftAny } from '../../trace/nftables/filter.js';
import type { ProxyModeEntry } from '../registry.js';
import type { IPFamily } from '../types.js';
import { cleanupArtifacts } from './cleanup.js';
import { KUBE_PROXY_TABLE } from './naming.js';

const NFT_FAMILY: Record<IPFamily, string> = { IPv4: 'ip', IPv6: 'ip6' };

/** The form parseNftAny would read: JSON, `nft list` text, or a transaction. */
const isTransaction = (text: string) => !text.trimStart().startsWith('{') && !/^table\s/m.test(text);

export const nftablesMode: ProxyModeEntry = {
  name: 'nftables',
  loadBackend: () => import('./proxier.js'),
  configSection: 'nftables',
  masqueradeSection: 'nftables',
  defaultNodePortAddresses: ['primary'],
  routeLocalnet: false,
  syncFailureMetric: {
    name: 'kubeproxy_sync_proxy_rules_nftables_sync_failures_total',
    help: 'Cumulative proxy nftables sync failures',
  },
  canonicalByDefault: false,
  memoryTable() {
    let rs = emptyRuleset();
    return {
      apply(result) {
        let next = rs;
        for (const a of result.artifacts) {
          // A chunked artifact is parsed piece by piece, without joining its text.
          if (a.kind === 'nft') next = applyTransaction(next, parseTransaction(a.chunks ?? a.text));
        }
        rs = next;
      },
      dump: () => formatListText(rs),
    };
  },
  check: (text) => validateNftText(text),
  isEmpty: (text) => (text.trimStart().startsWith('{')
    ? !/"(?:table|add|chain|rule)"/.test(text)
    : !/^\s*[^#\s]/m.test(text)),
  traceFilter: (rules, origins) => buildNftFilter(rules, origins),
  diff: {
    claimsLine: (line) => line.startsWith('{') ||
      /^(table|add|flush|delete|destroy|insert|replace|create)\s/.test(line),
    parse(table, facts) {
      const rs = normalizeRuleset(parseNftAny(table.text));
      nftablesFacts(rs, facts, table.origins);
      return normaliseNft(rs);
    },
    reducePair: (a, b) => (isTransaction(a) && isTransaction(b) ? reduceNftPair(a, b) : undefined),
    quickTargets: (text) => (/^add table /m.test(text) ? nftTargets(text) : undefined),
    sections: (text) => nftSections(text),
    familyFromAddresses: false,
    reparseWhole: true,
    emptyText: '',
  },
  kernel: {
    liveTrace: 'nft',
    async dump(exec, netns, family) {
      try {
        return await nftList(exec, netns, ['list', 'table', NFT_FAMILY[family], KUBE_PROXY_TABLE]);
      } catch {
        return ''; // no table yet
      }
    },
    apply: (exec, netns, _family, input) => applyNft(exec, netns, input),
    async restore(exec, netns, family, want) {
      // Re-created in one transaction: add (so delete cannot fail), delete, then everything.
      const t = `${NFT_FAMILY[family]} ${KUBE_PROXY_TABLE}`;
      await applyNft(exec, netns, `add table ${t}\ndelete table ${t}\n` +
        formatTransaction(dumpOps(parseListText(want))));
    },
    drift: (want, have) => nftDrift(want, have),
    load: (exec, netns, _family, text) => applyNft(exec, netns, loadableNft(text)),
    cleanupLeftovers,
  },
};

/** A canonical nft golden lists rules before the sets they use, which `nft -f` cannot load:
 *  the same state re-emitted in creation order (tables, chains, sets, rules, elements). */
export function loadableNft(text: string): string {
  return formatTransaction(dumpOps(applyTransaction(emptyRuleset(), parseTransaction(text))));
}

/** Removes an earlier nftables-mode kube-proxy's tables (upstream CleanupLeftovers). */
async function cleanupLeftovers(exec: HostExec, netns: string): Promise<string[]> {
  const problems: string[] = [];
  for (const a of cleanupArtifacts()) {
    const [, family, table] = a.text.trim().split(/\s+/);
    const listed = await exec.run('nft', ['list', 'tables', family!], { netns }).catch(() => ({ stdout: '' }));
    if (!listed.stdout.split('\n').some((l) => l.trim() === `table ${family} ${table}`)) continue;
    await applyNft(exec, netns, a.text).catch((e: Error) => { problems.push(`nftables cleanup: ${e.message}`); });
  }
  return problems;
}
