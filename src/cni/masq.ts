// Optional per-attachment masquerade (bridge `ipMasq`), in the node's nat table. The chain name
// is derived from (network, containerID) only, so DEL finds and removes the rules even when the
// pod namespace and its addresses are gone (the reference leaks them then: cni.md §4.7, R2).
// kdp clusters leave ipMasq off: pod-to-pod traffic must stay NAT-free (R4).
// Adding and removing are each one `iptables-restore --noflush` per family; the text is built
// here so the caller can run it inside its node batch.

import { createHash } from 'node:crypto';
import type { Targets } from './netns-target.js';

export interface MasqIP {
  /** The pod address without prefix. */
  readonly address: string;
  /** Its subnet, `net/len`. */
  readonly subnet: string;
  readonly v6: boolean;
}

export function masqChainName(network: string, containerID: string): string {
  // 28 characters, iptables' chain-name limit; `KDP-CNI-` keeps kdp's prefix on kernel objects.
  return `KDP-CNI-${createHash('sha512').update(network + containerID).digest('hex').slice(0, 20)}`;
}

function comment(network: string, containerID: string): string {
  return `"name: \\"${network}\\" id: \\"${containerID}\\""`;
}

export const restoreCommand = (v6: boolean) => (v6 ? 'ip6tables-restore' : 'iptables-restore');

/** `iptables-restore --noflush` input adding the chain and jumps for one family's IPs. */
export function masqAddText(network: string, containerID: string, ips: readonly MasqIP[]): string {
  const chain = masqChainName(network, containerID);
  const c = comment(network, containerID);
  const v6 = ips[0]?.v6 ?? false;
  const lines = ['*nat', `:${chain} - [0:0]`];
  for (const ip of ips) lines.push(`-A ${chain} -d ${ip.subnet} -m comment --comment ${c} -j ACCEPT`);
  lines.push(`-A ${chain} ! -d ${v6 ? 'ff00::/8' : '224.0.0.0/4'} -m comment --comment ${c} -j MASQUERADE`);
  for (const ip of ips) {
    lines.push(`-A POSTROUTING -s ${ip.address}/${v6 ? 128 : 32} -m comment --comment ${c} -j ${chain}`);
  }
  return [...lines, 'COMMIT', ''].join('\n');
}

/** The exact inverse of `masqAddText`; fails as a whole when any rule is already gone. */
export function masqRemoveText(
  network: string, containerID: string, ips: readonly Pick<MasqIP, 'address' | 'v6'>[],
): string {
  const chain = masqChainName(network, containerID);
  const c = comment(network, containerID);
  const v6 = ips[0]?.v6 ?? false;
  const dels = ips.map((ip) =>
    `-D POSTROUTING -s ${ip.address}/${v6 ? 128 : 32} -m comment --comment ${c} -j ${chain}`);
  return ['*nat', ...dels, `-F ${chain}`, `-X ${chain}`, 'COMMIT', ''].join('\n');
}

/** Splits IPs by family: [v4, v6], dropping empty groups. */
export function byFamily<T extends { v6: boolean }>(ips: readonly T[]): T[][] {
  return [ips.filter((i) => !i.v6), ips.filter((i) => i.v6)].filter((g) => g.length > 0);
}

export async function addMasq(
  t: Targets, network: string, containerID: string, ips: readonly MasqIP[],
): Promise<void> {
  for (const fam of byFamily(ips)) {
    const text = masqAddText(network, containerID, fam);
    await t.node(restoreCommand(fam[0]!.v6), ['-w', '5', '--noflush'], text);
  }
}

/**
 * Removes the chain and every POSTROUTING jump to it, whatever addresses they name (the slow,
 * always-correct path: one save per family). Absent rules are not an error.
 */
export async function removeMasq(t: Targets, network: string, containerID: string): Promise<void> {
  const chain = masqChainName(network, containerID);
  const tools = [['iptables-save', 'iptables-restore'], ['ip6tables-save', 'ip6tables-restore']] as const;
  for (const [save, restore] of tools) {
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
