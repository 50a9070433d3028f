// Network namespaces, links, addresses, routes and sysctls. `ensure…` functions are idempotent:
// they create what is missing and leave what is already right. Link/route changes for one
// namespace are batched into a single `ip -n NS -batch -` call.
//
// The one place namespaces are made and removed, two ways with one contract (an existing one
// is success for `ensure`, a missing one for `remove`): one `ip netns` process per call
// (`ensureNetns`/`deleteNetns`: node namespaces, a few per cluster), or lines written to
// long-lived `ip -batch` sessions (`buildSandboxNetns`: pod sandboxes, many at once).

import { existsSync } from 'node:fs';
import type { HostExec } from './exec.js';
import { isKdpError, kdpError } from '../errors.js';
import { buildIpSessionPool, type IpSessionOptions } from './ip-session.js';

/** ip's answers for a namespace that is not there (delete of a missing one succeeds). */
const GONE = /No such file|not found|Invalid/;

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
    if (isKdpError(e, 'KDP_HOST_EXEC') && GONE.test(e.message)) return;
    throw e;
  }
}

export interface SandboxNetns {
  /** Creates the named namespace; one that exists already is left as it is. */
  ensure(name: string): Promise<void>;
  /** Removes it; one that is already gone is not an error. */
  remove(name: string): Promise<void>;
  /** Ends the sessions (they also end by themselves when kdp dies: their stdin closes). */
  close(): void;
}

/** Names go into batch lines: only what `ip netns` names can be, and nothing that splits a line. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

/**
 * Namespaces made and removed through long-lived `ip -batch` sessions in kdp's own namespace,
 * not a process per pod: `netns add NAME` is a line written to a running ip (a few ms of kernel
 * work), where `ip netns add` as its own process costs a process start (~30-40 ms of CPU on a
 * busy host) — with 50 pods at once, the first stage of pod startup. Sessions run in kdp's mount
 * namespace (no `-n`), so the bind mounts under /run/netns are the host's, exactly as with `ip
 * netns add`. The loopback is not brought up here: that is part of the pod's network setup
 * (kubelet/cni-caller.ts), as containerd does with its loopback step. `warm`: start the
 * sessions now, not with the first pod (a spawn blocks kdp's loop).
 */
export function buildSandboxNetns(
  o: Pick<IpSessionOptions, 'onSpawn' | 'onExit' | 'size' | 'warm' | 'spawner'> = {},
): SandboxNetns {
  const pool = buildIpSessionPool(undefined, {
    size: o.size ?? 2, warm: o.warm, onSpawn: o.onSpawn, onExit: o.onExit, spawner: o.spawner,
  });
  const check = (name: string) => {
    if (!NAME.test(name)) {
      throw kdpError('KDP_INTERNAL', `invalid network namespace name ${JSON.stringify(name)}`);
    }
  };
  return {
    async ensure(name) {
      check(name);
      if (existsSync(`/run/netns/${name}`)) return;
      const out = await pool.run([`netns add ${name}`]);
      // A concurrent caller may have made it meanwhile: that is success, as with ensureNetns.
      if (!out.ok && !(/File exists/.test(out.stderr) && existsSync(`/run/netns/${name}`))) {
        throw kdpError('KDP_HOST_EXEC', `ip netns add ${name} failed: ${out.stderr.trim()}`);
      }
    },
    async remove(name) {
      check(name);
      const out = await pool.run([`netns delete ${name}`]);
      if (!out.ok && !GONE.test(out.stderr)) {
        throw kdpError('KDP_HOST_EXEC', `ip netns delete ${name} failed: ${out.stderr.trim()}`);
      }
    },
    close: () => pool.close(),
  };
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

/** Whether a link of that name exists in the namespace. */
export async function linkExists(exec: HostExec, ns: string, name: string): Promise<boolean> {
  const { stdout } = await exec.run('ip', ['-n', ns, '-o', 'link', 'show']);
  return stdout.split('\n').some((l) => l.split(':')[1]?.trim().split('@')[0] === name);
}
