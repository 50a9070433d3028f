// The iptables mode's registry entry (../registry.ts): its compiler, the fake that holds its
// tables in virtual mode, the iptables-restore/iptables-save commands of netns mode, the dump
// checks, the tracer's filter and the diff's reader.

import { iptablesFacts } from '../../diff/iptables-facts.js';
import { reduceIptablesPair } from '../../diff/iptables-reduce.js';
import { iptablesSections } from '../../diff/families.js';
import { normaliseIptables } from '../../diff/normalise.js';
import { iptablesTargets } from '../../diff/quick-targets.js';
import type { HostExec } from '../../host/exec.js';
import { FakeIptables } from '../../host/fake-iptables.js';
import { iptablesDrift } from '../../host/rule-drift.js';
import { applyIptablesRestore, iptablesSave, type IptablesFamily } from '../../host/rules.js';
import { parse, tablesOf } from '../../ruleset/iptables/parse.js';
import { validateText } from '../../ruleset/iptables/validate.js';
import { buildIptablesFilter } from '../../trace/iptables/filter.js';
import { buildTraceTables } from '../../trace/iptables/ruleset.js';
import type { ProxyModeEntry } from '../registry.js';
import type { IPFamily } from '../types.js';
import { planCleanup } from './cleanup.js';
import { jumpRuleRestoreInput } from './jump-chains.js';

const FAMILY: Record<IPFamily, IptablesFamily> = { IPv4: 'ipv4', IPv6: 'ipv6' };
const TOOL: Record<IptablesFamily, string> = { ipv4: 'iptables', ipv6: 'ip6tables' };

export const iptablesMode: ProxyModeEntry = {
  name: 'iptables',
  loadBackend: () => import('./proxier.js'),
  configSection: 'iptables',
  masqueradeSection: 'iptables',
  defaultNodePortAddresses: [],
  routeLocalnet: true,
  syncFailureMetric: {
    name: 'kubeproxy_sync_proxy_rules_iptables_restore_failures_total',
    help: 'Cumulative proxy iptables restore failures',
  },
  canonicalByDefault: false,
  memoryTable() {
    let held = new FakeIptables();
    return {
      apply(result) {
        // Staged on a copy: a refused artifact leaves the held tables as they were.
        const staged = new FakeIptables();
        staged.restore(held.save());
        for (const a of result.artifacts) staged.restore(a.text);
        if (result.full) {
          staged.restore(jumpRuleRestoreInput({
            rule: (t, c, args) => staged.has(t, c, args),
            chain: (t, c) => staged.hasChain(t, c),
          }));
        }
        held = staged;
      },
      dump: () => held.save(),
    };
  },
  check: (text) => validateText(text),
  isEmpty: (text) => !/^\s*[^#\s]/m.test(text),
  traceFilter: (rules, origins) => buildIptablesFilter(buildTraceTables(rules), { origins }),
  // kube-proxy writes KUBE-FIREWALL's "block incoming localnet connections" rule exactly when
  // it sets route_localnet=1 for localhost NodePorts (../sysctls.ts).
  servesLocalhostNodePorts: (ipv4Dump) => ipv4Dump.includes('block incoming localnet connections'),
  diff: {
    claimsLine: (line) =>
      /^[*:]|^-[AINXFDRZ] /.test(line) || line === 'COMMIT' || /^\[\d+:\d+\]/.test(line),
    parse(table, facts) {
      const tables = tablesOf(parse(table.text));
      iptablesFacts(tables, facts, table.origins);
      return normaliseIptables(tables);
    },
    reducePair: (a, b) => reduceIptablesPair(a, b),
    quickTargets: (text) => iptablesTargets(text),
    sections: (text) => iptablesSections(text),
    familyFromAddresses: true,
    reparseWhole: true,
    emptyText: '',
  },
  kernel: {
    liveTrace: 'xtables',
    dump: (exec, netns, family) => iptablesSave(exec, netns, FAMILY[family]),
    apply: (exec, netns, family, input) => applyIptablesRestore(exec, netns, input, FAMILY[family]),
    afterFullSync: ensureJumps,
    async restore(exec, netns, family, want) {
      await applyIptablesRestore(exec, netns, kubeChainsOnly(want), FAMILY[family]);
      await ensureJumps(exec, netns, family);
    },
    drift: (want, have) => iptablesDrift(want, have),
    async load(exec, netns, family, text) {
      const jumps = jumpRuleRestoreInput({ rule: () => false, chain: () => false });
      await applyIptablesRestore(exec, netns, jumps, FAMILY[family]);
      await applyIptablesRestore(exec, netns, text, FAMILY[family]);
    },
    cleanupLeftovers,
  },
};

/** Upstream's jumps from the built-in chains, added where `iptables-save` lacks them. */
async function ensureJumps(exec: HostExec, netns: string, family: IPFamily): Promise<void> {
  const saved = parseSave(await iptablesSave(exec, netns, FAMILY[family]));
  const input = jumpRuleRestoreInput({
    rule: (t, c, args) => saved.rules.has(`${t} ${c} ${args}`),
    chain: (t, c) => saved.chains.has(`${t} ${c}`),
  });
  if (input) await applyIptablesRestore(exec, netns, input, FAMILY[family]);
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

/** Removes an earlier iptables-mode kube-proxy's chains and jumps (upstream CleanupLeftovers). */
async function cleanupLeftovers(exec: HostExec, netns: string): Promise<string[]> {
  const problems: string[] = [];
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
      await exec.run(TOOL[family], ['-w', '5', '-t', j.table, '-D', j.from, ...j.args], { netns })
        .catch(() => undefined);
    }
    for (const input of plan.restores) {
      await applyIptablesRestore(exec, netns, input, family)
        .catch((e: Error) => { problems.push(`${family} iptables cleanup: ${e.message}`); });
    }
  }
  return problems;
}
