// An in-memory iptables that applies `iptables-restore --noflush` input the way the kernel does
// and dumps `iptables-save`-style text. The virtual-mode applier keeps each node's rules here;
// it fails like the real thing — the whole input is refused and the previous state is kept —
// on a rule for an undeclared chain, a jump to a missing chain, or `-X` of a chain in use.

import { kdpError } from '../errors.js';
import { formatArgs } from '../ruleset/iptables/format.js';
import { parse } from '../ruleset/iptables/parse.js';

const BUILTIN: Record<string, readonly string[]> = {
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  raw: ['PREROUTING', 'OUTPUT'],
};
const TARGETS = new Set(['ACCEPT', 'DROP', 'REJECT', 'RETURN', 'MASQUERADE', 'DNAT', 'SNAT', 'MARK', 'LOG',
  'NFLOG', 'CT', 'TRACE', 'NOTRACK', 'CONNMARK']);

interface Chain { policy: string; rules: string[][] }
type Tables = Map<string, Map<string, Chain>>;

export class FakeIptables {
  private tables: Tables = new Map();

  /** Applies restore input with --noflush semantics; atomic. */
  restore(text: string): void {
    const next = clone(this.tables);
    let table: Map<string, Chain> | undefined;
    let name = '';
    const fail = (why: string): never => {
      throw kdpError('KDP_HOST_EXEC', `iptables-restore: ${why} (table ${name})`);
    };
    for (const l of parse(text).lines) {
      if (l.kind === 'table') {
        name = l.name;
        table = next.get(name) ?? builtins(name);
        next.set(name, table);
      } else if (l.kind === 'chain') {
        const c = table!.get(l.name);
        if (c) {
          c.rules = [];
          if (l.policy !== '-') c.policy = l.policy;
        } else {
          table!.set(l.name, { policy: l.policy, rules: [] });
        }
      } else if (l.kind === 'chain-op') {
        if (l.op === '-X' && l.chain) {
          if (!table!.has(l.chain)) fail(`-X ${l.chain}: no such chain`);
          table!.delete(l.chain);
        } else if (l.op === '-N' && l.chain) {
          table!.set(l.chain, table!.get(l.chain) ?? { policy: '-', rules: [] });
        } else if (l.op === '-F') {
          for (const [n, c] of table!) if (!l.chain || n === l.chain) c.rules = [];
        }
      } else if (l.kind === 'rule') {
        const c = table!.get(l.chain) ?? fail(`-A ${l.chain}: chain does not exist`);
        if (l.op === '-A') c.rules.push([...l.args]);
        else if (l.op === '-I') c.rules.splice((l.position ?? 1) - 1, 0, [...l.args]);
        else if (l.op === '-D') {
          const i = c.rules.findIndex((r) => formatArgs(r) === formatArgs(l.args));
          if (i < 0) fail(`-D ${l.chain}: no such rule`);
          c.rules.splice(i, 1);
        } else fail(`${l.op} is not supported`);
      }
    }
    for (const [tn, t] of next) {
      name = tn;
      for (const [cn, c] of t) {
        for (const r of c.rules) {
          const j = r.indexOf('-j') >= 0 ? r[r.indexOf('-j') + 1] : r.indexOf('-g') >= 0 ? r[r.indexOf('-g') + 1] : undefined;
          if (j && !TARGETS.has(j) && !t.has(j)) fail(`rule in ${cn} jumps to missing chain ${j}`);
        }
      }
    }
    this.tables = next;
  }

  hasChain(table: string, chain: string): boolean {
    return this.tables.get(table)?.has(chain) ?? false;
  }

  /** True when `chain` of `table` holds a rule with exactly these arguments. */
  has(table: string, chain: string, args: string): boolean {
    return this.tables.get(table)?.get(chain)?.rules.some((r) => formatArgs(r) === args) ?? false;
  }

  /** `iptables-save` text (no counters, no timestamps), tables in a stable order. */
  save(): string {
    const out: string[] = [];
    for (const tn of ['raw', 'mangle', 'filter', 'nat'].filter((t) => this.tables.has(t))) {
      const t = this.tables.get(tn)!;
      out.push(`*${tn}`);
      for (const [cn, c] of t) out.push(`:${cn} ${c.policy === '-' ? '-' : c.policy} [0:0]`);
      for (const [cn, c] of t) for (const r of c.rules) out.push(`-A ${cn} ${formatArgs(r)}`);
      out.push('COMMIT');
    }
    return out.length ? `${out.join('\n')}\n` : '';
  }
}

function builtins(table: string): Map<string, Chain> {
  return new Map((BUILTIN[table] ?? []).map((c) => [c, { policy: 'ACCEPT', rules: [] }]));
}

function clone(t: Tables): Tables {
  return new Map([...t].map(([n, chains]) => [n, new Map([...chains].map(([c, v]) => [c, { policy: v.policy, rules: [...v.rules] }]))]));
}
