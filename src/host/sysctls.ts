// Writes sysctls inside a node's network namespace through `sysctl` run there (HostExec with
// `netns`): never on the host. Which keys and values is the caller's business (kube-proxy's:
// src/proxy/sysctls.ts). Returns what could not be done, one line each; the caller logs it (a
// read-only key is not a reason to stop kube-proxy).

import { writeFileSync } from 'node:fs';
import type { HostExec } from './exec.js';

export interface SysctlWrite {
  /** Dotted name (`net.ipv4.conf.all.route_localnet`). */
  readonly key: string;
  readonly value: number;
  /** Written only when the current value is lower (upstream's conntrack rule). */
  readonly raiseOnly: boolean;
  /** Written only where the key exists (a module's key). */
  readonly ifPresent: boolean;
}

export async function applySysctls(
  exec: HostExec, netns: string, writes: readonly SysctlWrite[],
): Promise<string[]> {
  const problems: string[] = [];
  for (const w of writes) {
    let current: number;
    try {
      current = Number((await exec.run('sysctl', ['-n', w.key], { netns })).stdout.trim());
    } catch (e) {
      if (!w.ifPresent) problems.push(`${w.key}: cannot read (${firstLine(e)})`);
      continue;
    }
    if (current === w.value || (w.raiseOnly && current > w.value)) continue;
    try {
      await exec.run('sysctl', ['-q', '-w', `${w.key}=${w.value}`], { netns });
    } catch (e) {
      problems.push(`${w.key}=${w.value}: not set, stays ${current} (${firstLine(e)})`);
    }
  }
  return problems;
}

function firstLine(e: unknown): string {
  return String((e as Error)?.message ?? e).split('\n')[0]!;
}

/** Writes `key=value` sysctls of the current namespace through /proc/sys, without a process. */
export function writeSysctlsHere(sysctls: readonly string[]): void {
  for (const kv of sysctls) {
    const [key, value] = kv.split('=') as [string, string];
    const path = `/proc/sys/${key.split('.').map((s) => s.replace(/\//g, '.')).join('/')}`;
    try {
      writeFileSync(path, value);
    } catch (e) {
      // Like `sysctl -e`: a key this kernel lacks (IPv6 disabled) is not an error.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
}
