// iptables rules as the kernel lists them back, for comparing what kube-proxy compiled with what
// `iptables-save` shows: option groups are order-free, `/32` and `/128` host masks dropped,
// `--or-mark X` / `--xor-mark X` become `--set-xmark X/X` / `X/0x0`, hex marks lose padding,
// probabilities compare as the kernel's 31-bit fraction, the implicit `recent --mask …
// --rsource` and REJECT's default `--reject-with icmp-port-unreachable` are dropped.
// (The kernel tests use it too, through test/helpers/iptables-normalise.ts.)

import { parse, tablesOf } from '../ruleset/iptables/parse.js';
import type { IptablesTable } from '../ruleset/iptables/model.js';

function hex(t: string): string {
  return t.replace(/0x[0-9a-fA-F]+/g, (h) => `0x${BigInt(h).toString(16)}`);
}

function groupsOf(args: readonly string[]): string[][] {
  const groups: string[][] = [];
  let cur: string[] | undefined;
  let neg = false;
  for (const a of args) {
    if (a === '!') { neg = true; continue; }
    if (a.startsWith('-') && !/^-\d/.test(a)) {
      cur = neg ? ['!', a] : [a];
      groups.push(cur);
      neg = false;
      continue;
    }
    if (!cur) { cur = []; groups.push(cur); }
    cur.push(a);
  }
  return groups;
}

/** A rule's arguments → a canonical string independent of option order. */
export function normaliseRule(args: readonly string[]): string {
  const out: string[] = [];
  for (const g of groupsOf(args)) {
    const opt = g[g.length === 1 ? 0 : g[0] === '!' ? 1 : 0]!;
    let vals = g.slice(g.indexOf(opt) + 1);
    if (opt === '--mask' || opt === '--rsource') continue;
    if (opt === '--reject-with' && /^icmp6?-port-unreachable$/.test(vals[0] ?? '')) continue;
    if (opt === '-s' || opt === '-d') vals = vals.map((v) => v.replace(/\/(32|128)$/, ''));
    if (opt === '--or-mark') {
      out.push(`--set-xmark ${hex(vals[0]!)}/${hex(vals[0]!)}`);
      continue;
    }
    if (opt === '--xor-mark') { out.push(`--set-xmark ${hex(vals[0]!)}/0x0`); continue; }
    if (opt === '--probability') vals = vals.map((v) => String(Math.round(Number(v) * 2 ** 31)));
    out.push([...g.slice(0, g.indexOf(opt) + 1), ...vals.map(hex)].join(' '));
  }
  return out.sort().join(' | ');
}

/** `table/chain` → normalised rules in order, for every (not deleted) chain of a dump. */
export function normaliseChains(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const tables: IptablesTable[] = text.trim() ? tablesOf(parse(text)) : [];
  for (const t of tables) {
    for (const c of t.chains) {
      if (!c.deleted) out.set(`${t.name}/${c.name}`, c.rules.map((r) => normaliseRule(r.args)));
    }
  }
  return out;
}
