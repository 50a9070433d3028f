// The tables kdp itself writes into a netns node's kernel, beside kube-proxy's: the CNI-side
// masquerade of cni.md §8.5 (4) (`ensureMasquerade` in src/host/topology.ts writes it with
// iptables(-nft)-restore: nat POSTROUTING, non-LOCAL destinations → KDP-MASQ: RETURN for each
// cluster CIDR of the family, then MASQUERADE). The tracer walks it after kube-proxy's rules.
//
// Kernel order: kube-proxy's `ip kube-proxy` nat-postrouting chain and iptables-nft's nat
// POSTROUTING both hook postrouting at srcnat (100); the NAT core runs the nat chains of a hook
// until one sets up the source mapping of the connection and then stops (nf_nat_inet_fn), so a
// packet kube-proxy masqueraded never reaches KDP-MASQ. In iptables mode kube-proxy's
// KUBE-POSTROUTING jump comes first in POSTROUTING (it is inserted at the top), the same order.

import { parseCIDR } from '../api/net.js';
import { buildIptablesFilter } from './iptables/filter.js';
import { buildTraceTables } from './iptables/ruleset.js';
import type { NodeFilter } from './topology.js';
import type { World } from './world.js';

export const KDP_MASQ_CHAIN = 'KDP-MASQ';

/** The nat table kdp writes for one family, as `iptables-save` lists it (the cluster CIDRs
 *  of that family only). */
export function kdpMasqueradeTable(clusterCIDRs: readonly string[]): string {
  return [
    '*nat',
    ':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]',
    `:${KDP_MASQ_CHAIN} - [0:0]`,
    `-A POSTROUTING -m addrtype ! --dst-type LOCAL -m comment --comment "kdp: masquerade traffic leaving the cluster" -j ${KDP_MASQ_CHAIN}`,
    ...clusterCIDRs.map((c) =>
      `-A ${KDP_MASQ_CHAIN} -d ${c} -m comment --comment "kdp: pod to pod is not NATed" -j RETURN`),
    `-A ${KDP_MASQ_CHAIN} -j MASQUERADE`,
    'COMMIT',
    '',
  ].join('\n');
}

/**
 * `kubeProxy` followed by kdp's own tables (per family: `clusterCIDRs` of the packet's
 * family). Only POSTROUTING differs: a world kube-proxy's rules left without a source NAT runs
 * through kdp's nat POSTROUTING next.
 */
export function withKdpTables(kubeProxy: NodeFilter, clusterCIDRs: readonly string[]): NodeFilter {
  const v4 = clusterCIDRs.filter((c) => parseCIDR(c)?.family === 'IPv4');
  const v6 = clusterCIDRs.filter((c) => parseCIDR(c)?.family === 'IPv6');
  const kdp4 = buildIptablesFilter(buildTraceTables(kdpMasqueradeTable(v4)));
  const kdp6 = buildIptablesFilter(buildTraceTables(kdpMasqueradeTable(v6)));
  return {
    mode: kubeProxy.mode,
    ...(kubeProxy.isLocal ? { isLocal: (ip: string) => kubeProxy.isLocal!(ip) } : {}),
    runHook(hook, worlds, env) {
      const after = kubeProxy.runHook(hook, worlds, env);
      if (hook !== 'POSTROUTING') return after;
      const out: World[] = [];
      for (const w of after) {
        if ((w.verdict !== undefined && w.verdict !== 'ACCEPT') || w.snat || w.masquerade) {
          out.push(w);
          continue;
        }
        // A chain's ACCEPT ends its own table only; the next table still sees the packet.
        const verdict = w.verdict;
        w.verdict = undefined;
        for (const x of (w.pkt.dst.includes(':') ? kdp6 : kdp4).runHook(hook, [w], env)) {
          if (x.verdict === undefined) x.verdict = verdict;
          out.push(x);
        }
      }
      return out;
    },
  };
}
