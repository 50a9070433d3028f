// An in-memory iptables that applies `iptables-restore` input the way the kernel does and dumps
// `iptables-save`-style text. The virtual-mode applier keeps each node's rules here, and the
// fake rule tools (fake-rule-tools.ts) answer `iptables-restore` with it. It fails like the real
// thing (iptables-nft 1.8.9, measured in a namespace; test/host/fake-rule-tools.test.ts compares
// them where the tools exist): the whole input is refused, the previous state is kept, and the
// error carries the tool's exit status and stderr —
//   1  `line N failed: No chain/target/match by that name.` (a rule in, or -X of, a missing chain)
//   1  `line N failed: Bad rule (does a matching rule exist in that chain?).` (-D of no rule)
//   1  `COMMIT expected at line N` (truncated input)
//   2  `Chain 'X' does not exist` at the table's COMMIT line (a jump to a missing chain), and
//      every other unreadable line, in xtables' parameter-problem form
//   4  `line N: CHAIN_DEL failed (Device or resource busy): chain X` (-X of a chain in use).

import { isKdpError, kdpError, type KdpError } from '../errors.js';
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
/** The version the messages are written after (Debian 12's iptables-nft). */
const VERSION = 'v1.8.9 (nf_tables)';

interface Chain { policy: string; rules: string[][] }
type Tables = Map<string, Map<string, Chain>>;

/** A refusal as the tool reports it: exit status and stderr (also in the message). */
export interface ToolRefusal extends KdpError {
  readonly exitCode: number;
  readonly stderr: string;
}

export function toolRefusal(tool: string, exitCode: number, stderr: string): ToolRefusal {
  return Object.assign(kdpError('KDP_HOST_EXEC', `${tool} failed (${exitCode}): ${stderr.trim()}`),
    { exitCode, stderr });
}

export function isToolRefusal(e: unknown): e is ToolRefusal {
  return isKdpError(e, 'KDP_HOST_EXEC') && typeof (e as { exitCode?: unknown }).exitCode === 'number';
}

export interface RestoreOptions {
  /** `--noflush` (kube-proxy's way): tables named in the input keep what it does not touch. */
  readonly noflush?: boolean;
  /** `--test`: check only, change nothing. */
  readonly test?: boolean;
}

export class FakeIptables {
  private tables: Tables = new Map();

  /** `tool`: the program name the errors carry (`ip6tables-restore` for IPv6). */
  constructor(private readonly tool = 'iptables-restore') {}

  /** Applies restore input (with --noflush semantics unless told otherwise); atomic. */
  restore(text: string, o: RestoreOptions = { noflush: true }): void {
    const next = clone(this.tables);
    let table: Map<string, Chain> | undefined;
    let name = '';
    const lineFail = (n: number, why: string): never => {
      throw toolRefusal(this.tool, 1, `${this.tool}: line ${n} failed: ${why}`);
    };
    const problem = (n: number, why: string): never => {
      throw toolRefusal(this.tool, 2, `${this.tool} ${VERSION}: ${why}\nError occurred at line: ${n}\n`
        + `Try \`${this.tool} -h' or '${this.tool} --help' for more information.`);
    };
    let lines: ReturnType<typeof parse>['lines'];
    try {
      lines = parse(text).lines;
    } catch (e) {
      if (!isKdpError(e, 'KDP_PARSE')) throw e;
      const m = /^iptables line (\d+): ([^:]+)/.exec(e.message);
      if (m?.[2] === 'table has no COMMIT') {
        throw toolRefusal(this.tool, 1, `${this.tool}: COMMIT expected at line ${text.split('\n').length}`);
      }
      return problem(Number(m?.[1] ?? 0), m?.[2] ?? e.message);
    }
    const commitLine = new Map<string, number>();
    const deletedAt = new Map<string, number>();
    lines.forEach((l, i) => {
      const n = i + 1;
      if (l.kind === 'table') {
        name = l.name;
        table = (o.noflush ? next.get(name) : undefined) ?? builtins(name);
        next.set(name, table);
      } else if (l.kind === 'commit') {
        commitLine.set(name, n);
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
          if (!table!.has(l.chain)) lineFail(n, 'No chain/target/match by that name.');
          table!.delete(l.chain);
          deletedAt.set(`${name} ${l.chain}`, n);
        } else if (l.op === '-N' && l.chain) {
          table!.set(l.chain, table!.get(l.chain) ?? { policy: '-', rules: [] });
        } else if (l.op === '-F') {
          for (const [cn, c] of table!) if (!l.chain || cn === l.chain) c.rules = [];
        }
      } else if (l.kind === 'rule') {
        const c = table!.get(l.chain) ?? lineFail(n, 'No chain/target/match by that name.');
        if (l.op === '-A') c.rules.push([...l.args]);
        else if (l.op === '-I') c.rules.splice((l.position ?? 1) - 1, 0, [...l.args]);
        else if (l.op === '-D') {
          const at = c.rules.findIndex((r) => formatArgs(r) === formatArgs(l.args));
          if (at < 0) lineFail(n, 'Bad rule (does a matching rule exist in that chain?).');
          c.rules.splice(at, 1);
        } else problem(n, `${l.op} is not supported`);
      }
    });
    for (const [tn, t] of next) {
      for (const c of t.values()) {
        for (const r of c.rules) {
          const j = r.indexOf('-j') >= 0 ? r[r.indexOf('-j') + 1] : r.indexOf('-g') >= 0 ? r[r.indexOf('-g') + 1] : undefined;
          if (!j || TARGETS.has(j) || t.has(j)) continue;
          const deleted = deletedAt.get(`${tn} ${j}`);
          if (deleted !== undefined) {
            throw toolRefusal(this.tool, 4,
              `${this.tool} ${VERSION}: \nline ${deleted}: CHAIN_DEL failed (Device or resource busy): chain ${j}`);
          }
          problem(commitLine.get(tn) ?? lines.length, `Chain '${j}' does not exist`);
        }
      }
    }
    if (!o.test) this.tables = next;
  }

  hasChain(table: string, chain: string): boolean {
    return this.tables.get(table)?.has(chain) ?? false;
  }

  /** True when `chain` of `table` holds a rule with exactly these arguments. */
  has(table: string, chain: string, args: string): boolean {
    return this.tables.get(table)?.get(chain)?.rules.some((r) => formatArgs(r) === args) ?? false;
  }

  /** `iptables-save` text (no counters, no timestamps), tables in a stable order; `-t table`
   *  with `only`. */
  save(only?: string): string {
    const out: string[] = [];
    for (const tn of ['raw', 'mangle', 'filter', 'nat'].filter((t) => this.tables.has(t) && (!only || t === only))) {
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
