// Running one CNI plugin binary as a runtime does (libcni invoke/raw_exec.go): found by `type` in
// the bin dirs, `CNI_*` in the environment, the config on stdin, the result or the error object
// on stdout. When the plugin's own namespace is a named node namespace, the binary runs under
// `ip netns exec NODE` (which also remounts /sys, as plugins that read it need). Arguments are
// always an array; no shell.

import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostSpawner, runProgram, type Spawner } from '../host/spawn.js';
import type { CniOutcome } from './plugin.js';

/** kdp's own plugin, for `type: kdp-cni` when no `kdp-cni` binary lies in the bin dirs. */
export const KDP_CNI_SCRIPT = fileURLToPath(new URL('../../bin/kdp-cni.js', import.meta.url));

/** The executable for `type`: `[file, ...args]`, or undefined when no bin dir has it. */
export function findPlugin(type: string, binDirs: readonly string[]): string[] | undefined {
  if (type.includes('/')) return undefined;
  for (const dir of binDirs) {
    const f = join(dir, type);
    try {
      accessSync(f, constants.X_OK);
      return [f];
    } catch { /* next dir */ }
  }
  return type === 'kdp-cni' ? [process.execPath, KDP_CNI_SCRIPT] : undefined;
}

export interface ExecPluginOptions {
  readonly command: string[];
  readonly env: Readonly<Record<string, string>>;
  readonly stdin: string;
  /** The named node namespace the plugin runs in; undefined = this process's namespace. */
  readonly netns?: string;
  readonly timeoutMs?: number;
  readonly spawner?: Spawner;
}

export async function execPlugin(o: ExecPluginOptions): Promise<CniOutcome> {
  const [file, ...args] = o.netns ? ['ip', 'netns', 'exec', o.netns, ...o.command] : o.command;
  const r = await runProgram(o.spawner ?? hostSpawner, file!, args, {
    env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', ...o.env },
    input: o.stdin, timeoutMs: o.timeoutMs ?? 120_000, maxOutput: 16 << 20,
  });
  return { stdout: r.stdout, stderr: r.stderr, exitCode: r.code ?? (r.signal ? 128 : 1) };
}
