// Optional per-attachment masquerade (bridge `ipMasq`), in the node's nat table. The chain name
// is derived from (network, containerID) only, so DEL finds and removes the rules even when the
// pod namespace and its addresses are gone (the reference leaks them then: cni.md §4.7, R2).
// kdp clusters leave ipMasq off: pod-to-pod traffic must stay NAT-free (R4).

import { createHash } from 'node:crypto';
import type { Targets } from './netns-target.js';

export function masqChainName(network: string, containerID: string): string {
  // 28 characters, iptables' chain-name limit; `KDP-CNI-` keeps kdp's prefix on kernel objects.
  return `KDP-CNI-${createHash('sha512').update(network + containerID).digest('hex').slice(0, 20)}`;
}

function comment(network: string, containerID: string): string {
  return `"name: \\"${network}\\" id: \\"${containerID}\\""`;
}

export async function addMasq(
  t: Targets,
  network: string,
  containerID: string,
  ips: readonly { address: string; subnet: string; v6: boolean }[],
): Promise<void> {
  for (const fam of [false, true]) {
    const mine = ips.filter((i) => i.v6 === fam);
    if (mine.length === 0) continue;
    const chain = masqChainName(network, containerID);
    const c = comment(network, containerID);
    const mcast = fam ? 'ff00::/8' : '224.0.0.0/4';
    const lines = ['*nat', `:${chain} - [0:0]`];
    for (const ip of mine) {
      lines.push(`-A ${chain} -d ${ip.subnet} -m comment --comment ${c} -j ACCEPT`);
    }
    lines.push(`-A ${chain} ! -d ${mcast} -m comment --comment ${c} -j MASQUERADE`);
    for (const ip of mine) {
      lines.push(`-A POSTROUTING -s ${ip.address}/${fam ? 128 : 32} -m comment --comment ${c} -j ${chain}`);
    }
    lines.push('COMMIT', '');
    await t.node(fam ? 'ip6tables-restore' : 'iptables-restore', ['-w', '5', '--noflush'], lines.join('\n'));
  }
}

/** Removes the chain and every POSTROUTING jump to it; absent rules are not an error. */
export async function removeMasq(t: Targets, network: string, containerID: string): Promise<void> {
  const chain = masqChainName(network, containerID);
  for (const [save, restore] of [['iptables-save', 'iptables-restore'], ['ip6tables-save', 'ip6tables-restore']] as const) {
    const { stdout } = await t.node(save, ['-t', 'nat']).catch(() => ({ stdout: '' }));
    if (!stdout.includes(chain)) continue;
    const dels = stdout
      .split('\n')
      .filter((l) => l.startsWith('-A POSTROUTING ') && l.endsWith(`-j ${chain}`))
      .map((l) => `-D${l.slice(2)}`);
    const input = ['*nat', ...dels, `-F ${chain}`, `-X ${chain}`, 'COMMIT', ''].join('\n');
    await t.node(restore, ['-w', '5', '--noflush'], input);
  }
}
