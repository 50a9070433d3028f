// An iptables rule table ready to trace: parsed, every rule compiled once. Accepts
// `iptables-save` dumps and kube-proxy's restore input; for the latter the jumps from the
// built-in chains (which kube-proxy ensures outside the restore input) are added as upstream
// ensures them, so a compiled table traces like a live node.

import { kdpError } from '../../errors.js';
import { parse, tablesOf } from '../../ruleset/iptables/parse.js';
import type { IptablesTable } from '../../ruleset/iptables/model.js';
import { JUMP_RULES } from '../../proxy/iptables/jump-chains.js';
import { formatArgs } from '../../ruleset/iptables/format.js';
import { compileRule, type CompiledRule } from './rule.js';

export interface TraceChain {
  readonly name: string;
  /** ACCEPT/DROP for built-in chains; '-' for user chains. */
  readonly policy: string;
  readonly rules: readonly CompiledRule[];
  /**
   * For long chains (KUBE-SERVICES has one rule per service port): the rules that can match a
   * destination, in order — the rules for that exact address merged with those for any.
   */
  candidates?(dst: string): readonly CompiledRule[];
}

const INDEX_MIN_RULES = 32;

function indexChain(rules: readonly CompiledRule[]): TraceChain['candidates'] {
  if (rules.length < INDEX_MIN_RULES) return undefined;
  const byDst = new Map<string, CompiledRule[]>();
  const any: CompiledRule[] = [];
  for (const r of rules) {
    if (r.exactDst) byDst.set(r.exactDst, [...(byDst.get(r.exactDst) ?? []), r]);
    else any.push(r);
  }
  if (byDst.size === 0) return undefined;
  const merged = new Map<string, readonly CompiledRule[]>();
  return (dst) => {
    let m = merged.get(dst);
    if (!m) {
      m = [...any, ...(byDst.get(dst) ?? [])].sort((a, b) => a.index - b.index);
      if (merged.size > 10_000) merged.clear();
      merged.set(dst, m);
    }
    return m;
  };
}

export type TraceTables = ReadonlyMap<string, ReadonlyMap<string, TraceChain>>;

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
      const rules = c.rules.map((r, i) => compileRule(name, i + 1, r.args, ruleText(r), names));
      const candidates = indexChain(rules);
      chains.set(name, { name, policy: c.policy, rules, ...(candidates ? { candidates } : {}) });
    }
    for (const c of chains.values()) {
      for (const r of c.rules) if (r.target.kind === 'jump') r.target.ref = chains.get(r.target.chain);
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
  const wanted = JUMP_RULES.filter((j) => j.table === table && names.has(j.to));
  // Only when the dump has none of them: a live node's dump already holds its own jumps.
  const present = wanted.some((j) => raw.get(j.from)?.rules.some((r) => r.args[r.args.length - 1] === j.to));
  if (present) return;
  // Processed in order, each prepended: as upstream ensures them on a fresh node.
  for (const j of wanted) {
    if (!raw.has(j.from)) {
      raw.set(j.from, { policy: 'ACCEPT', rules: [] });
      names.add(j.from);
    }
    raw.get(j.from)!.rules.unshift({ args: j.args, text: `-A ${j.from} ${formatArgs(j.args)}` });
  }
}

export function chainOf(tables: TraceTables, table: string, chain: string): TraceChain {
  const c = tables.get(table)?.get(chain);
  if (!c) throw kdpError('KDP_TRACE', `iptables: no chain ${chain} in table ${table}`);
  return c;
}
