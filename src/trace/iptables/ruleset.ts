// An iptables rule table ready to trace: parsed, every rule compiled once. Accepts
// `iptables-save` dumps and kube-proxy's restore input; for the latter the jumps from the
// built-in chains (which kube-proxy ensures outside the restore input) are added as upstream
// ensures them, so a compiled table traces like a live node.

import { kdpError } from '../../errors.js';
import { parse, tablesOf } from '../../ruleset/iptables/parse.js';
import type { IptablesTable } from '../../ruleset/iptables/model.js';
import { compileRule, type CompiledRule } from './rule.js';

export interface TraceChain {
  readonly name: string;
  /** ACCEPT/DROP for built-in chains; '-' for user chains. */
  readonly policy: string;
  readonly rules: readonly CompiledRule[];
}

export type TraceTables = ReadonlyMap<string, ReadonlyMap<string, TraceChain>>;

/** Upstream's ensured jumps (kube-proxy-iptables.md §3.1), in their resulting top-down order. */
const KUBE_JUMPS: ReadonlyArray<readonly [string, string, readonly string[]]> = [
  ['filter', 'INPUT', ['-j', 'KUBE-FIREWALL']],
  ['filter', 'INPUT', ['-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes load balancer firewall', '-j', 'KUBE-PROXY-FIREWALL']],
  ['filter', 'INPUT', ['-m', 'comment', '--comment', 'kubernetes health check service ports', '-j', 'KUBE-NODEPORTS']],
  ['filter', 'INPUT', ['-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes externally-visible service portals', '-j', 'KUBE-EXTERNAL-SERVICES']],
  ['filter', 'FORWARD', ['-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes load balancer firewall', '-j', 'KUBE-PROXY-FIREWALL']],
  ['filter', 'FORWARD', ['-m', 'comment', '--comment', 'kubernetes forwarding rules', '-j', 'KUBE-FORWARD']],
  ['filter', 'FORWARD', ['-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES']],
  ['filter', 'FORWARD', ['-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes externally-visible service portals', '-j', 'KUBE-EXTERNAL-SERVICES']],
  ['filter', 'OUTPUT', ['-j', 'KUBE-FIREWALL']],
  ['filter', 'OUTPUT', ['-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes load balancer firewall', '-j', 'KUBE-PROXY-FIREWALL']],
  ['filter', 'OUTPUT', ['-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES']],
  ['nat', 'PREROUTING', ['-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES']],
  ['nat', 'OUTPUT', ['-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES']],
  ['nat', 'POSTROUTING', ['-m', 'comment', '--comment', 'kubernetes postrouting rules', '-j', 'KUBE-POSTROUTING']],
];

const BUILTIN = ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'];

export function buildTraceTables(text: string, opts: { addKubeJumps?: boolean } = {}): TraceTables {
  return compileTables(tablesOf(parse(text)), opts.addKubeJumps ?? true);
}

export function compileTables(tables: readonly IptablesTable[], addKubeJumps: boolean): TraceTables {
  const out = new Map<string, Map<string, TraceChain>>();
  for (const t of tables) {
    const names = new Set(t.chains.filter((c) => !c.deleted).map((c) => c.name));
    const raw = new Map<string, { policy: string; rules: { args: readonly string[]; text: string }[] }>();
    for (const c of t.chains) {
      if (c.deleted) continue;
      raw.set(c.name, { policy: c.policy || (BUILTIN.includes(c.name) ? 'ACCEPT' : '-'), rules: [...c.rules] });
    }
    if (addKubeJumps) addJumps(t.name, raw, names);
    const chains = new Map<string, TraceChain>();
    for (const [name, c] of raw) {
      chains.set(name, {
        name,
        policy: c.policy,
        rules: c.rules.map((r, i) => compileRule(name, i + 1, r.args, ruleText(r), names)),
      });
    }
    out.set(t.name, chains);
  }
  return out;
}

function ruleText(r: { args: readonly string[]; text: string }): string {
  return r.text.replace(/^-A \S+ /, '');
}

function addJumps(
  table: string,
  raw: Map<string, { policy: string; rules: { args: readonly string[]; text: string }[] }>,
  names: Set<string>,
): void {
  const wanted = KUBE_JUMPS.filter(([t, , args]) => t === table && names.has(args[args.length - 1]!));
  for (const [, from] of wanted) {
    if (!raw.has(from)) {
      raw.set(from, { policy: 'ACCEPT', rules: [] });
      names.add(from);
    }
  }
  // Only when the dump has none of them: a live node's dump already holds its own jumps.
  const present = wanted.some(([, from, args]) =>
    raw.get(from)!.rules.some((r) => r.args[r.args.length - 1] === args[args.length - 1]));
  if (present) return;
  const byChain = new Map<string, { args: readonly string[]; text: string }[]>();
  for (const [, from, args] of wanted) {
    const list = byChain.get(from) ?? [];
    list.push({ args, text: `-A ${from} ${args.map((a) => (a.includes(' ') ? `"${a}"` : a)).join(' ')}` });
    byChain.set(from, list);
  }
  for (const [from, jumps] of byChain) raw.get(from)!.rules.unshift(...jumps);
}

export function chainOf(tables: TraceTables, table: string, chain: string): TraceChain {
  const c = tables.get(table)?.get(chain);
  if (!c) throw kdpError('KDP_TRACE', `iptables: no chain ${chain} in table ${table}`);
  return c;
}
