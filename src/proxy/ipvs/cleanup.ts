// What removes everything the ipvs mode created (upstream cleanupLeftovers), as argument
// vectors for execFile, in upstream's order: flush IPVS, delete kube-ipvs0, per iptables family
// unlink the jump rules, flush then delete the kube chains, and last destroy the ipsets (a set
// still referenced by a rule cannot be destroyed). Upstream destroys only the IPv4 set names;
// kdp also destroys the `KUBE-6-` ones an IPv6 proxier created (a deliberate difference).

import { DUMMY_DEVICE } from './netlink.js';
import { IPSET_INFO, ipsetName } from './ipset.js';
import { IPTABLES_CHAINS, IPTABLES_JUMPS } from './iptables-rules.js';

export type Argv = readonly [string, ...string[]];

export function cleanupCommands(): Argv[] {
  const cmds: Argv[] = [['ipvsadm', '-C'], ['ip', 'link', 'del', DUMMY_DEVICE]];
  for (const bin of ['iptables', 'ip6tables']) {
    for (const j of IPTABLES_JUMPS) {
      cmds.push([bin, '-t', j.table, '-D', j.from, '-m', 'comment', '--comment', j.comment,
        '-j', j.to]);
    }
    for (const c of IPTABLES_CHAINS) cmds.push([bin, '-t', c.table, '-F', c.chain]);
    for (const c of IPTABLES_CHAINS) cmds.push([bin, '-t', c.table, '-X', c.chain]);
  }
  for (const family of ['IPv4', 'IPv6'] as const) {
    for (const info of IPSET_INFO) cmds.push(['ipset', 'destroy', ipsetName(info.name, family)]);
  }
  return cmds;
}

/**
 * What kube-proxy does outside the restore input on every sync (upstream
 * createAndLinkKubeChain), for a fresh node: create the kube chains (`-N`), then prepend the
 * jump rules `-I FROM -m comment --comment C -j TO` in upstream's order (so the last one ends up
 * first). On a node where they exist, upstream's ensure-semantics make these no-ops.
 */
export function linkCommands(family: 'IPv4' | 'IPv6'): Argv[] {
  const bin = family === 'IPv4' ? 'iptables' : 'ip6tables';
  return [
    ...IPTABLES_CHAINS.map((c) => [bin, '-t', c.table, '-N', c.chain] as Argv),
    ...IPTABLES_JUMPS.map((j) => [bin, '-t', j.table, '-I', j.from, '-m', 'comment',
      '--comment', j.comment, '-j', j.to] as Argv),
  ];
}
