// Which program runs the kdp/echo workload. The native build (native/kdp-echo.c, ~1.5 MB
// resident) is compiled once per source version into the data directory with the machine's C
// compiler; without one, the plain-JS echo (bin/kdp-echo.js, Node's ~40 MB floor) serves the
// same contract. Both answer `pod=… from=… to=…` identically (test/kubelet/echo-command.test.ts).

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { ensurePrivateDirSync } from '../util/private-files.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const ECHO_SOURCE = fileURLToPath(new URL('../../native/kdp-echo.c', import.meta.url));
export const ECHO_SCRIPT = fileURLToPath(new URL('../../bin/kdp-echo.js', import.meta.url));
/** V8 settings for the JS fallback: small heaps, no compiler threads (bench/netns-echo-memory.ts). */
export const ECHO_JS_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=16', '--v8-pool-size=0'];

export interface EchoCommand {
  readonly file: string;
  readonly args: readonly string[];
  readonly native: boolean;
  /** Why the JS fallback is used (no compiler, compile error), for the log. */
  readonly reason?: string;
}

export function jsEchoCommand(script = ECHO_SCRIPT, reason?: string): EchoCommand {
  return { file: process.execPath, args: [...ECHO_JS_FLAGS, script], native: false, ...(reason ? { reason } : {}) };
}

/**
 * The native echo under `<binDir>/kdp-echo-<hash of the source>`, built when missing (to a
 * temporary name, then renamed: concurrent callers never run a half-written binary). Falls back
 * to the JS echo when no compiler works.
 */
export async function resolveEchoCommand(binDir: string, compilers: readonly string[] = ['cc', 'gcc']): Promise<EchoCommand> {
  let source: Buffer;
  try {
    source = readFileSync(ECHO_SOURCE);
  } catch {
    return jsEchoCommand(undefined, `${ECHO_SOURCE} not found`);
  }
  const target = join(binDir, `kdp-echo-${createHash('sha256').update(source).digest('hex').slice(0, 12)}`);
  if (existsSync(target)) return { file: target, args: [], native: true };
  ensurePrivateDirSync(binDir);
  const tmp = `${target}.${process.pid}.tmp`;
  const errors: string[] = [];
  for (const cc of compilers) {
    try {
      await run(cc, ['-O2', '-o', tmp, ECHO_SOURCE], { timeout: 60_000 });
      chmodSync(tmp, 0o700); // an executable: owner only, as every file in the data dir
      renameSync(tmp, target);
      return { file: target, args: [], native: true };
    } catch (e) {
      rmSync(tmp, { force: true });
      errors.push(`${cc}: ${((e as Error).message.split('\n')[0] ?? '').slice(0, 200)}`);
    }
  }
  return jsEchoCommand(undefined, `no working C compiler (${errors.join('; ')})`);
}
