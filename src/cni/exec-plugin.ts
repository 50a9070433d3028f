// Running one CNI plugin binary as a runtime does (libcni invoke/raw_exec.go): found by `type` in
// the bin dirs, `CNI_*` in the environment, the config on stdin, the result or the error object
// on stdout. When the plugin's own namespace is a named node namespace, the binary runs under
// `ip netns exec NODE` (which also remounts /sys, as plugins that read it need). Arguments are
// always an array; no shell.

import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
}

export function execPlugin(o: ExecPluginOptions): Promise<CniOutcome> {
  const [file, ...args] = o.netns ? ['ip', 'netns', 'exec', o.netns, ...o.command] : o.command;
  return new Promise((resolve) => {
    const child = spawn(file!, args, {
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', ...o.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: o.timeoutMs ?? 120_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    child.stdin.on('error', () => undefined);
    child.on('error', (e) => resolve({ stdout: '', stderr: e.message, exitCode: 127 }));
    child.on('close', (code, signal) => resolve({ stdout, stderr, exitCode: code ?? (signal ? 128 : 1) }));
    child.stdin.end(o.stdin);
  });
}
