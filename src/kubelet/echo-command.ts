// Which program runs the kdp/echo workload. The native build (native/kdp-echo.c, ~1.5 MB
// resident) is compiled once per source version into the data directory with the machine's C
// compiler; without one, the plain-JS echo (bin/kdp-echo.js, Node's ~40 MB floor) serves the
// same contract. Both answer `pod=… from=… to=…` identically (test/kubelet/echo-command.test.ts).

import { fileURLToPath } from 'node:url';
import { buildNative } from '../host/native-build.js';

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
 * The native echo under `<binDir>/kdp-echo-<hash of the source>`, built when missing
 * (src/host/native-build.ts). Falls back to the JS echo when no compiler works.
 */
export async function resolveEchoCommand(binDir: string, compilers: readonly string[] = ['cc', 'gcc']): Promise<EchoCommand> {
  const built = await buildNative({ source: ECHO_SOURCE, binDir, name: 'kdp-echo', compilers });
  return built.ok ? { file: built.file, args: [], native: true } : jsEchoCommand(undefined, built.reason);
}
