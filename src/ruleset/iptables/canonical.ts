// Canonical form of restore input, as upstream's test helper sortIPTablesRules (reference
// §5.2): tables by name; chains KUBE-NODEPORTS, KUBE-SERVICES, other KUBE-* by byte order,
// then the rest by byte order; the rules of filter/nat KUBE-NODEPORTS and KUBE-SERVICES
// stable-sorted by the service name in their comment (nat KUBE-SERVICES' "must be the last
// rule" stays last); every other chain keeps its order. Printed as upstream's dump String().

import type { IptablesChain, IptablesRule, IptablesTable } from './model.js';
import { parse, tablesOf } from './parse.js';

function chainRank(name: string): number {
  if (name === 'KUBE-NODEPORTS') return 0;
  if (name === 'KUBE-SERVICES') return 1;
  return name.startsWith('KUBE-') ? 2 : 3;
}

function compareChains(a: IptablesChain, b: IptablesChain): number {
  const r = chainRank(a.name) - chainRank(b.name);
  if (r !== 0) return r;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function commentOf(r: IptablesRule): string | undefined {
  const i = r.args.indexOf('--comment');
  return i >= 0 ? r.args[i + 1] : undefined;
}

function serviceName(comment: string): string {
  const i = comment.search(/[ :]/);
  return i >= 0 ? comment.slice(0, i) : comment;
}

/** Upstream orderByCommentServiceName: "less" only when both have comments. */
function lessByService(a: IptablesRule, b: IptablesRule): boolean {
  const x = commentOf(a);
  const y = commentOf(b);
  if (x === undefined || y === undefined) return false;
  return serviceName(x) < serviceName(y);
}

/** A stable sort driven by a `less` predicate (Go's sort.SliceStable semantics). */
function stableSort<T>(items: T[], less: (a: T, b: T) => boolean): T[] {
  // Insertion-style merge sort keeping equal elements in order.
  if (items.length < 2) return items;
  const mid = items.length >> 1;
  const left = stableSort(items.slice(0, mid), less);
  const right = stableSort(items.slice(mid), less);
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) {
    if (less(right[j]!, left[i]!)) out.push(right[j++]!);
    else out.push(left[i++]!);
  }
  while (i < left.length) out.push(left[i++]!);
  while (j < right.length) out.push(right[j++]!);
  return out;
}

const isLast = (r: IptablesRule) => commentOf(r)?.includes('must be the last rule') ?? false;

function sortRules(table: string, chain: IptablesChain): IptablesRule[] {
  const rules = [...chain.rules];
  if (chain.name === 'KUBE-NODEPORTS' && (table === 'filter' || table === 'nat')) {
    return stableSort(rules, lessByService);
  }
  if (chain.name === 'KUBE-SERVICES' && table === 'filter') return stableSort(rules, lessByService);
  if (chain.name === 'KUBE-SERVICES' && table === 'nat') {
    return stableSort(rules, (a, b) => {
      if (isLast(a)) return false;
      if (isLast(b)) return true;
      return lessByService(a, b);
    });
  }
  return rules;
}

export function canonicalTables(tables: readonly IptablesTable[]): string {
  const out: string[] = [];
  const sorted = [...tables].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const t of sorted) {
    const chains = [...t.chains].sort(compareChains);
    out.push(`*${t.name}`);
    for (const c of chains) {
      const ctr = c.counters ?? { packets: '0', bytes: '0' };
      out.push(`:${c.name} - [${ctr.packets}:${ctr.bytes}]`);
    }
    for (const c of chains) for (const r of sortRules(t.name, c)) out.push(r.text);
    for (const c of chains) if (c.deleted) out.push(`-X ${c.name}`);
    out.push('COMMIT');
  }
  return out.length ? `${out.join('\n')}\n` : '';
}

/** Canonical text of an `iptables-restore` input. */
export function canonicalizeRestore(text: string): string {
  return canonicalTables(tablesOf(parse(text)));
}
