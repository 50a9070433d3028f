// A HostExec that answers the rule-table tools from in-memory tables, one fake per kind —
// `iptables-restore`/`iptables-save` (and ip6tables-) from FakeIptables, `nft -f -`/`nft list`
// from the nftables fake, `ipvsadm -R`/`ipvsadm -Sn` from FakeIpvs — each per network
// namespace. It fails as the real tools do: the same exit status and stderr, inside the same
// KDP_HOST_EXEC message the real HostExec builds (`[netns NS] nft -f - failed (1): …`). So
// kube-proxy's kernel applier, the cleanup of other modes and drift checks run without root.
// Any other program fails as a missing one does (ENOENT).

import { kdpError } from '../errors.js';
import { applyTransaction } from '../ruleset/nftables/fake.js';
import { formatListText } from '../ruleset/nftables/list-text.js';
import { emptyRuleset, tableKey, type NftRuleset } from '../ruleset/nftables/model.js';
import { parseTransaction } from '../ruleset/nftables/transaction.js';
import { describe, type ExecOptions, type ExecResult, type HostExec } from './exec.js';
import { FakeIpvs } from './fake-ipvsadm.js';
import { FakeIptables, isToolRefusal } from './fake-iptables.js';

export interface FakeRuleTools extends HostExec {
  /** The namespaces' tables, for assertions (created on first use). */
  iptables(netns: string, family?: Family): FakeIptables;
  nft(netns: string): NftRuleset;
  ipvs(netns: string): FakeIpvs;
}

type Family = 'ipv4' | 'ipv6';
const RESTORE = new Map<string, Family>([['iptables-restore', 'ipv4'], ['ip6tables-restore', 'ipv6']]);
const SAVE = new Map<string, Family>([['iptables-save', 'ipv4'], ['ip6tables-save', 'ipv6']]);

export function buildFakeRuleTools(): FakeRuleTools {
  const iptables = new Map<string, FakeIptables>();
  const nft = new Map<string, NftRuleset>();
  const ipvs = new Map<string, FakeIpvs>();
  const ipt = (ns: string, family: Family = 'ipv4') => {
    const k = `${ns}\0${family}`;
    let t = iptables.get(k);
    if (!t) iptables.set(k, t = new FakeIptables(family === 'ipv4' ? 'iptables-restore' : 'ip6tables-restore'));
    return t;
  };
  const vs = (ns: string) => {
    let t = ipvs.get(ns);
    if (!t) ipvs.set(ns, t = new FakeIpvs());
    return t;
  };

  function answer(file: string, args: readonly string[], ns: string, input: string): ExecResult | Refused {
    const restore = RESTORE.get(file);
    if (restore) {
      try {
        ipt(ns, restore).restore(input, { noflush: args.includes('--noflush'), test: args.includes('--test') });
      } catch (e) {
        if (isToolRefusal(e)) return { code: e.exitCode, stderr: e.stderr };
        throw e;
      }
      return { stdout: '', stderr: '' };
    }
    const save = SAVE.get(file);
    if (save) {
      const t = args.indexOf('-t');
      return { stdout: ipt(ns, save).save(t >= 0 ? args[t + 1] : undefined), stderr: '' };
    }
    if (file === 'nft') return runNft(args, ns, input);
    if (file === 'ipvsadm' || file === 'ipvsadm-restore') {
      if (file === 'ipvsadm-restore' || args[0] === '-R' || args[0] === '--restore') {
        const r = vs(ns).restore(input);
        return r.exitCode === 0 ? { stdout: '', stderr: r.stderr } : { code: r.exitCode, stderr: r.stderr };
      }
      if (args[0] === '-Sn' || (args.includes('-S') && args.includes('-n'))) return { stdout: vs(ns).save(), stderr: '' };
      return { code: 2, stderr: `invalid option \`${args[0] ?? ''}'\n` };
    }
    return { code: 'ENOENT', stderr: `spawn ${file} ENOENT` };
  }

  function runNft(args: readonly string[], ns: string, input: string): ExecResult | Refused {
    const rs = nft.get(ns) ?? emptyRuleset();
    if (args[0] === '-f' && args[1] === '-') return applyNft(rs, input, (next) => nft.set(ns, next));
    if (args[0] === 'list' && args[1] === 'ruleset') return { stdout: formatListText(rs), stderr: '' };
    if (args[0] === 'list' && args[1] === 'tables') {
      const tables = [...rs.tables.values()].filter((t) => !args[2] || t.family === args[2]);
      return { stdout: tables.map((t) => `table ${t.family} ${t.name}\n`).join(''), stderr: '' };
    }
    if (args[0] === 'list' && args[1] === 'table' && args.length === 4) {
      const t = rs.tables.get(tableKey(args[2] as never, args[3]!));
      if (!t) {
        const cmd = args.join(' ');
        const at = cmd.lastIndexOf(args[3]!);
        return { code: 1, stderr: `Error: No such file or directory\n${cmd}\n${' '.repeat(at)}${'^'.repeat(args[3]!.length)}\n` };
      }
      const one: NftRuleset = { ...rs, tables: new Map([[tableKey(t.family, t.name), t]]) };
      return { stdout: formatListText(one), stderr: '' };
    }
    return { code: 1, stderr: `Error: syntax error, unexpected ${args[0] ?? 'end of file'}\n` };
  }

  return {
    iptables: ipt,
    nft: (ns) => nft.get(ns) ?? emptyRuleset(),
    ipvs: vs,
    async run(file: string, args: readonly string[], opts: ExecOptions = {}) {
      const ns = opts.netns ?? opts.netnsPath ?? '';
      const input = opts.input === undefined ? '' : typeof opts.input === 'string' ? opts.input : opts.input.join('');
      const r = answer(file, args, ns, input);
      if ('code' in r) {
        throw kdpError('KDP_HOST_EXEC', `${describe(file, args, opts)} failed (${r.code}): ${r.stderr.trim()}`);
      }
      return r;
    },
  };
}

interface Refused {
  readonly code: number | string;
  readonly stderr: string;
}

/** `nft -f -`: one transaction; a refusal names the line as nft does (`/dev/stdin:L:C-C: Error:`). */
function applyNft(rs: NftRuleset, input: string, commit: (next: NftRuleset) => void): ExecResult | Refused {
  const lines = input.split('\n');
  // The op lines in order: parseTransaction skips blank and comment lines.
  const opLines = lines.map((l, i) => [l, i + 1] as const)
    .filter(([l]) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  const at = (n: number, why: string): Refused => {
    const [text = '', line = n] = opLines[n - 1] ?? [];
    return { code: 1, stderr: `/dev/stdin:${line}:1-${Math.max(1, text.length)}: Error: ${why}\n${text}\n${'^'.repeat(Math.max(1, text.length))}\n` };
  };
  let ops: ReturnType<typeof parseTransaction>;
  try {
    ops = parseTransaction(input);
  } catch (e) {
    const m = /line (\d+)/.exec((e as Error).message);
    const line = Number(m?.[1] ?? 1);
    const text = lines[line - 1] ?? '';
    return { code: 1, stderr: `/dev/stdin:${line}:1-${Math.max(1, text.length)}: Error: syntax error\n${text}\n${'^'.repeat(Math.max(1, text.length))}\n` };
  }
  try {
    commit(applyTransaction(rs, ops));
  } catch (e) {
    const m = /operation (\d+) failed: ([^(:]+?)(?: \([^)]*\))?: (\S+ \S+)/.exec((e as Error).message);
    if (!m) throw e;
    // nft says which object only for rules.
    return at(Number(m[1]), `${/ rule$/.test(m[3]!) ? 'Could not process rule: ' : ''}${m[2]!.trim()}`);
  }
  return { stdout: '', stderr: '' };
}
