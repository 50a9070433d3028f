// Writes kube-proxy's sysctls (src/proxy/sysctls.ts) inside a node's network namespace through
// `sysctl` run there (HostExec with `netns`): never on the host. Returns what could not be
// done, one line each; the caller logs it (a read-only key is not a reason to stop kube-proxy).

import type { SysctlWrite } from '../proxy/sysctls.js';
import type { HostExec } from './exec.js';

export async function applyKubeProxySysctls(
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
