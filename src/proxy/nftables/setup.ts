// The fixed part of the kube-proxy table, written on every full sync (upstream
// setupNFTables): base chains, the top-level regular chains and their jump rules, the shared
// sets and maps, and the masquerade / no-endpoint / firewall / dispatch rules.

import * as N from './naming.js';
import type { TxWriter } from './tx-writer.js';

interface BaseChain {
  readonly name: string;
  readonly type: 'filter' | 'nat';
  readonly hook: string;
  readonly priority: number;
}

/** Upstream nftablesBaseChains, in order (DNAT priority −100, SNAT 100, filter 0). */
export const BASE_CHAINS: readonly BaseChain[] = [
  { name: N.FILTER_PREROUTING_PRE_DNAT, type: 'filter', hook: 'prerouting', priority: -110 },
  { name: N.FILTER_OUTPUT_PRE_DNAT, type: 'filter', hook: 'output', priority: -110 },
  { name: N.FILTER_INPUT, type: 'filter', hook: 'input', priority: 0 },
  { name: N.FILTER_FORWARD, type: 'filter', hook: 'forward', priority: 0 },
  { name: N.FILTER_OUTPUT, type: 'filter', hook: 'output', priority: 0 },
  { name: N.NAT_PREROUTING, type: 'nat', hook: 'prerouting', priority: -100 },
  { name: N.NAT_OUTPUT, type: 'nat', hook: 'output', priority: -100 },
  { name: N.NAT_POSTROUTING, type: 'nat', hook: 'postrouting', priority: 100 },
];

/** Upstream nftablesJumpChains: [destination, source, extra match words]. */
export const JUMP_CHAINS: ReadonlyArray<readonly [string, string, string]> = [
  [N.NODEPORT_ENDPOINTS_CHECK_CHAIN, N.FILTER_INPUT, 'ct state new'],
  [N.SERVICE_ENDPOINTS_CHECK_CHAIN, N.FILTER_INPUT, 'ct state new'],
  [N.SERVICE_ENDPOINTS_CHECK_CHAIN, N.FILTER_FORWARD, 'ct state new'],
  [N.SERVICE_ENDPOINTS_CHECK_CHAIN, N.FILTER_OUTPUT, 'ct state new'],
  [N.FIREWALL_CHECK_CHAIN, N.FILTER_PREROUTING_PRE_DNAT, 'ct state new'],
  [N.FIREWALL_CHECK_CHAIN, N.FILTER_OUTPUT_PRE_DNAT, 'ct state new'],
  [N.SERVICES_CHAIN, N.NAT_OUTPUT, ''],
  [N.SERVICES_CHAIN, N.NAT_PREROUTING, ''],
  [N.MASQUERADING_CHAIN, N.NAT_POSTROUTING, ''],
  [N.CLUSTER_IPS_CHECK_CHAIN, N.FILTER_FORWARD, 'ct state new'],
  [N.CLUSTER_IPS_CHECK_CHAIN, N.FILTER_OUTPUT, 'ct state new'],
];

export interface SetupOptions {
  readonly words: N.FamilyWords;
  /** Masquerade mark string, e.g. `0x00004000`. */
  readonly mark: string;
  /** This family's service CIDRs (empty: no "unallocated ClusterIP" drop rule). */
  readonly serviceCIDRs: readonly string[];
  /** nodePortAddresses matches every local address. */
  readonly nodePortMatchAll: boolean;
  /** Node IPs accepting node ports (loopback already removed); unused when match-all. */
  readonly nodePortIPs: readonly string[];
  /** First setup of this process: add + delete base chains so changed hooks apply. */
  readonly recreateBaseChains: boolean;
}

export function writeSetup(tx: TxWriter, o: SetupOptions): void {
  const { ipX, addrType, noLocalhost } = o.words;
  const noLocal = noLocalhost.join(' ');
  tx.addTable('rules for kube-proxy');
  if (o.recreateBaseChains) {
    for (const bc of BASE_CHAINS) {
      tx.addChain(bc.name);
      tx.delete('chain', bc.name);
    }
  }
  for (const bc of BASE_CHAINS) {
    tx.addChain(bc.name, bc);
    tx.flush('chain', bc.name);
  }
  const created = new Set<string>();
  const ensureChain = (name: string): void => {
    if (created.has(name)) return;
    created.add(name);
    tx.addChain(name);
    tx.flush('chain', name);
  };
  for (const [dst, src, extra] of JUMP_CHAINS) {
    ensureChain(dst);
    tx.addRule(src, extra ? `${extra} jump ${dst}` : `jump ${dst}`);
  }
  for (const c of [N.SERVICES_CHAIN, N.CLUSTER_IPS_CHECK_CHAIN, N.MASQUERADING_CHAIN,
    N.MARK_MASQ_CHAIN]) ensureChain(c);

  tx.addRule(N.MARK_MASQ_CHAIN, `mark set mark or ${o.mark}`);
  tx.addRule(N.MASQUERADING_CHAIN, `mark and ${o.mark} == 0 return`);
  tx.addRule(N.MASQUERADING_CHAIN, `mark set mark xor ${o.mark}`);
  tx.addRule(N.MASQUERADING_CHAIN, 'masquerade fully-random');

  tx.addSetOrMap('set', N.CLUSTER_IPS_SET, `type ${addrType} ; comment "Active ClusterIPs" ;`);
  tx.addRule(N.CLUSTER_IPS_CHECK_CHAIN, `${ipX} daddr @${N.CLUSTER_IPS_SET} reject`,
    'Reject traffic to invalid ports of ClusterIPs');
  if (o.serviceCIDRs.length > 0) {
    tx.addRule(N.CLUSTER_IPS_CHECK_CHAIN, `${ipX} daddr { ${o.serviceCIDRs.join(',')} } drop`,
      'Drop traffic to unallocated ClusterIPs');
  }

  tx.addSetOrMap('set', N.NODEPORT_IPS_SET,
    `type ${addrType} ; comment "IPs that accept NodePort traffic" ;`);
  if (o.nodePortMatchAll) {
    tx.delete('set', N.NODEPORT_IPS_SET);
  } else {
    tx.flush('set', N.NODEPORT_IPS_SET);
    for (const ip of o.nodePortIPs) tx.addElement(N.NODEPORT_IPS_SET, ip);
  }

  const key3 = `${addrType} . inet_proto . inet_service : verdict`;
  tx.addSetOrMap('map', N.NO_ENDPOINT_SERVICES_MAP,
    `type ${key3} ; comment "vmap to drop or reject packets to services with no endpoints" ;`);
  tx.addSetOrMap('map', N.NO_ENDPOINT_NODEPORTS_MAP, 'type inet_proto . inet_service : verdict ;'
    + ' comment "vmap to drop or reject packets to service nodeports with no endpoints" ;');
  tx.addChainWithComment(N.REJECT_CHAIN,
    'helper for @no-endpoint-services / @no-endpoint-nodeports');
  tx.flush('chain', N.REJECT_CHAIN);
  tx.addRule(N.REJECT_CHAIN, 'reject');
  tx.addRule(N.SERVICE_ENDPOINTS_CHECK_CHAIN,
    `${ipX} daddr . meta l4proto . th dport vmap @${N.NO_ENDPOINT_SERVICES_MAP}`);
  const onNodePorts = o.nodePortMatchAll ? noLocal : `${ipX} daddr @${N.NODEPORT_IPS_SET}`;
  tx.addRule(N.NODEPORT_ENDPOINTS_CHECK_CHAIN,
    `${onNodePorts} meta l4proto . th dport vmap @${N.NO_ENDPOINT_NODEPORTS_MAP}`);

  tx.addSetOrMap('map', N.FIREWALL_IPS_MAP,
    `type ${key3} ; comment "destinations that are subject to LoadBalancerSourceRanges" ;`);
  ensureChain(N.FIREWALL_CHECK_CHAIN);
  tx.addRule(N.FIREWALL_CHECK_CHAIN,
    `${ipX} daddr . meta l4proto . th dport vmap @${N.FIREWALL_IPS_MAP}`);

  tx.addSetOrMap('map', N.SERVICE_IPS_MAP,
    `type ${key3} ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ;`);
  tx.addSetOrMap('map', N.SERVICE_NODEPORTS_MAP,
    'type inet_proto . inet_service : verdict ; comment "NodePort traffic" ;');
  tx.addRule(N.SERVICES_CHAIN, `${ipX} daddr . meta l4proto . th dport vmap @${N.SERVICE_IPS_MAP}`);
  const dispatch = o.nodePortMatchAll ? `fib daddr type local ${noLocal}` : onNodePorts;
  tx.addRule(N.SERVICES_CHAIN,
    `${dispatch} meta l4proto . th dport vmap @${N.SERVICE_NODEPORTS_MAP}`);
}
