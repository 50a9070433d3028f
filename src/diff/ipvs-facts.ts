// Semantic facts of an ipvs-mode state: each virtual server is a group of its own (ipvs keeps no
// Service names), real servers are its endpoints with their share of the weight; the ipsets,
// dummy addresses and supplementary iptables rules are generic facts.

import type { IptablesTable } from '../ruleset/iptables/model.js';
import type { IpvsState } from '../ruleset/ipvs/types.js';
import { addTarget, formatProbability, lowerProto, setFact } from './facts-util.js';
import { iptablesFacts } from './iptables-facts.js';
import type { FactTable } from './types.js';

const hostPort = (ip: string, port: number) =>
  (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

export function ipvsFacts(state: IpvsState, iptables: readonly IptablesTable[],
  facts: FactTable): void {
  for (const vs of state.ipvs.virtualServers) {
    const proto = lowerProto(vs.protocol) ?? 'tcp';
    const addr = hostPort(vs.address, vs.port);
    const group = `ipvs ${proto} ${addr}`;
    const flags = vs.schedFlags.length ? ` ${vs.schedFlags.join(',')}` : '';
    setFact(facts, group, 'scheduler', vs.scheduler + flags);
    if (vs.persistence !== undefined) setFact(facts, group, 'persistence', `${vs.persistence}s`);
    const total = vs.realServers.reduce((s, r) => s + r.weight, 0);
    for (const rs of vs.realServers) {
      const ep = hostPort(rs.address, rs.port);
      const share = total === 0 ? 0 : rs.weight / total;
      setFact(facts, group, `endpoint ${ep}`, `probability ${formatProbability(share)}` +
        (rs.forward === 'masq' ? '' : ` ${rs.forward}`));
    }
    addTarget(facts, { kind: 'cluster', ip: vs.address, port: vs.port, proto });
  }
  for (const set of state.ipsets) {
    for (const e of set.entries) setFact(facts, '', `ipset ${set.name}: ${e.value}`);
  }
  for (const a of state.dummyAddresses) setFact(facts, '', `kube-ipvs0 address ${a}`);
  iptablesFacts(iptables, facts, undefined, 'iptables ');
}
