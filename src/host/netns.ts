// Network namespaces, links, addresses, routes and sysctls. `ensure…` functions are idempotent:
// they create what is missing and leave what is already right. Link/route changes for one
// namespace are batched into a single `ip -n NS -batch -` call.

import { existsSync } from 'node:fs';
import type { HostExec } from './exec.js';
import { isKdpError } from '../errors.js';

export async function listNetns(exec: HostExec): Promise<string[]> {
  const { stdout } = await exec.run('ip', ['netns', 'list']);
  return stdout
    .split('\n')
    .map((l) => l.split(' ')[0]!.trim())
    .filter(Boolean);
}

export async function ensureNetns(exec: HostExec, name: string): Promise<void> {
  // `ip netns add` makes /run/netns/NAME: looking there saves an `ip netns list` per pod.
  if (existsSync(`/run/netns/${name}`)) return;
  await exec.run('ip', ['netns', 'add', name]);
  await exec.run('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
}

/** Deletes a namespace; a namespace that is already gone is not an error. */
export async function deleteNetns(exec: HostExec, name: string): Promise<void> {
  try {
    await exec.run('ip', ['netns', 'delete', name]);
  } catch (e) {
    if (isKdpError(e, 'KDP_HOST_EXEC') && /No such file|not found|Invalid/.test(e.message)) return;
    throw e;
  }
}

/** Runs `ip` batch lines in a namespace (one process for many changes). */
export async function ipBatch(exec: HostExec, netns: string | undefined, lines: readonly string[]): Promise<void> {
  if (lines.length === 0) return;
  const args = netns ? ['-n', netns, '-batch', '-'] : ['-batch', '-'];
  await exec.run('ip', args, { input: `${lines.join('\n')}\n` });
}

export async function setSysctl(exec: HostExec, netns: string, key: string, value: string): Promise<void> {
  await exec.run('sysctl', ['-q', '-w', `${key}=${value}`], { netns });
}

export interface LinkInfo {
  readonly ifname: string;
  readonly ifindex: number;
  readonly linkKind?: string;
  readonly master?: string;
  readonly operstate?: string;
  readonly address?: string;
  readonly addrs: readonly { family: 'inet' | 'inet6'; local: string; prefixlen: number }[];
}

export async function listLinks(exec: HostExec, netns: string): Promise<LinkInfo[]> {
  const { stdout } = await exec.run('ip', ['-n', netns, '-j', '-d', 'addr', 'show']);
  const raw = JSON.parse(stdout || '[]') as Array<Record<string, unknown>>;
  return raw.map((l) => ({
    ifname: String(l.ifname),
    ifindex: Number(l.ifindex),
    linkKind: (l.linkinfo as { info_kind?: string } | undefined)?.info_kind,
    master: l.master as string | undefined,
    operstate: l.operstate as string | undefined,
    address: l.address as string | undefined,
    addrs: ((l.addr_info as Array<Record<string, unknown>>) ?? []).map((a) => ({
      family: a.family as 'inet' | 'inet6',
      local: String(a.local),
      prefixlen: Number(a.prefixlen),
    })),
  }));
}
