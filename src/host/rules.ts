// Applying kube-proxy's compiled tables inside a namespace, and reading them back. Each apply is
// one atomic transaction (`iptables-restore` per table set, `nft -f`), so a failed apply leaves
// the previous rules in place — the kernel rejects the whole input.

import type { HostExec } from './exec.js';

export type IptablesFamily = 'ipv4' | 'ipv6';

const RESTORE = { ipv4: 'iptables-restore', ipv6: 'ip6tables-restore' } as const;
const SAVE = { ipv4: 'iptables-save', ipv6: 'ip6tables-save' } as const;

/** As upstream: `--noflush --counters`, wait for the xtables lock. */
export async function applyIptablesRestore(
  exec: HostExec,
  netns: string,
  text: string | readonly string[],
  family: IptablesFamily = 'ipv4',
): Promise<void> {
  await exec.run(RESTORE[family], ['-w', '5', '--noflush', '--counters'], { netns, input: text });
}

export async function iptablesSave(exec: HostExec, netns: string, family: IptablesFamily = 'ipv4', table?: string): Promise<string> {
  const args = table ? ['-t', table] : [];
  return (await exec.run(SAVE[family], args, { netns })).stdout;
}

/** `text`: an `nft -f` file, or its newline-terminated pieces in order. */
export async function applyNft(exec: HostExec, netns: string,
  text: string | readonly string[]): Promise<void> {
  await exec.run('nft', ['-f', '-'], { netns, input: text });
}

export async function nftList(exec: HostExec, netns: string, args: readonly string[] = ['list', 'ruleset']): Promise<string> {
  return (await exec.run('nft', [...args], { netns })).stdout;
}

/** `ipset restore` (the -exist flag makes re-creating identical sets a no-op). */
export async function applyIpset(exec: HostExec, netns: string, text: string): Promise<void> {
  await exec.run('ipset', ['restore', '-exist'], { netns, input: text });
}
