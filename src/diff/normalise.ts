// The normalised rule text of a table (the `--rules` view and the "same text?" test): counters,
// generated-by comments, timestamps and handles dropped; tables, chains, sets and set elements
// sorted (the kernel does not care about their order); rule order inside a chain kept.

import type { IptablesTable } from '../ruleset/iptables/model.js';
import type { NftRuleset } from '../ruleset/nftables/model.js';
import type { IpvsState } from '../ruleset/ipvs/types.js';

const byName = <T extends { name: string }>(a: T, b: T) =>
  (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const sorted = (xs: Iterable<string>) => [...xs].sort();

export function normaliseIptables(tables: readonly IptablesTable[]): string[] {
  const out: string[] = [];
  for (const t of [...tables].sort(byName)) {
    const chains = t.chains.filter((c) => !c.deleted).sort(byName);
    out.push(`*${t.name}`);
    for (const c of chains) out.push(`:${c.name} ${c.policy || '-'}`);
    for (const c of chains) for (const r of c.rules) out.push(r.text);
    out.push('COMMIT');
  }
  return out;
}

export function normaliseNft(rs: NftRuleset): string[] {
  const out: string[] = [];
  const tables = [...rs.tables.values()].sort((a, b) =>
    `${a.family} ${a.name}` < `${b.family} ${b.name}` ? -1 : 1);
  for (const t of tables) {
    const tn = `${t.family} ${t.name}`;
    out.push(`table ${tn}${t.comment ? ` comment ${JSON.stringify(t.comment)}` : ''}`);
    for (const c of [...t.chains.values()].sort(byName)) {
      const base = c.hook ? ` { type ${c.type} hook ${c.hook} priority ${c.priority ?? 0} ;` +
        ` policy ${c.policy ?? 'accept'} ; }` : '';
      out.push(`chain ${tn} ${c.name}${base}`);
      for (const r of c.rules) {
        out.push(`rule ${tn} ${c.name} ${r.tokens.join(' ')}` +
          (r.comment ? ` comment ${JSON.stringify(r.comment)}` : ''));
      }
    }
    for (const s of [...t.sets.values()].sort(byName)) {
      const flags = s.flags.length ? ` ; flags ${[...s.flags].sort().join(',')}` : '';
      out.push(`${s.kind} ${tn} ${s.name} { type ${s.type}${flags}` +
        `${s.timeout !== undefined ? ` ; timeout ${s.timeout}s` : ''} ; }`);
      const els = [...s.elements.values()].map((e) => `element ${tn} ${s.name} { ` +
        `${e.key.join(' . ')}${e.comment ? ` comment ${JSON.stringify(e.comment)}` : ''}` +
        `${e.value ? ` : ${e.value.join(' ')}` : ''} }`);
      out.push(...sorted(els));
    }
  }
  return out;
}

export function normaliseIpvs(state: IpvsState, iptables: readonly IptablesTable[]): string[] {
  const out = ['### ipvsadm'];
  const vss = [...state.ipvs.virtualServers].map((vs) => {
    const id = `-${vs.protocol[0]!.toLowerCase()} ${vs.address}:${vs.port}`;
    const flags = vs.schedFlags.length ? ` -b ${vs.schedFlags.join(',')}` : '';
    const head = `-A ${id} -s ${vs.scheduler}${flags}` +
      `${vs.persistence !== undefined ? ` -p ${vs.persistence}` : ''}`;
    const reals = sorted(vs.realServers.map((r) =>
      `-a ${id} -r ${r.address}:${r.port} -${r.forward[0]} -w ${r.weight}`));
    return [head, ...reals];
  }).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
  for (const v of vss) out.push(...v);
  out.push('### ipset');
  for (const s of [...state.ipsets].sort(byName)) {
    const opts = s.options.map((o) => (o.value === undefined ? o.key : `${o.key} ${o.value}`));
    out.push(`create ${s.name} ${s.type} ${opts.join(' ')}`.trimEnd());
    out.push(...sorted(s.entries.map((e) => `add ${s.name} ${e.value}`)));
  }
  out.push('### iptables', ...normaliseIptables(iptables));
  out.push('### kube-ipvs0', ...sorted(state.dummyAddresses));
  return out;
}
