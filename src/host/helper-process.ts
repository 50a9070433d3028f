// A small Node helper process that kdp talks to in JSON lines over stdio (the exec helper, the
// workload launcher). Why helpers at all: spawn() forks the caller and blocks its event loop
// until the child has exec'd, and forking kdp costs far more than forking a 40 MiB helper.
// The helper runs in its own process group, so a terminal's Ctrl-C reaches only kdp, which
// still needs the helper to clean up; it exits when kdp closes its stdin (or dies).

import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Small V8 heaps, no compiler threads: a helper holds a few pipes. */
const NODE_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=64', '--v8-pool-size=0'];

export interface HelperProcess {
  readonly child: ChildProcess;
  /** Whether the helper keeps kdp's event loop alive (only while it has work in flight). */
  hold(on: boolean): void;
  send(message: unknown): void;
}

/** Starts `source` under `node -e`; each JSON line it prints is parsed and handed to onMessage. */
export function startHelperProcess<M>(source: string, onMessage: (m: M) => void): HelperProcess {
  const child = spawn(process.execPath, [...NODE_FLAGS, '-e', source], {
    stdio: ['pipe', 'pipe', 'ignore'], detached: true,
  });
  child.stdin!.on('error', () => undefined);
  createInterface({ input: child.stdout! }).on('line', (l) => {
    let m: M;
    try { m = JSON.parse(l) as M; } catch { return; }
    onMessage(m);
  });
  return {
    child,
    hold(on) {
      for (const h of [child, child.stdin, child.stdout] as Array<{ ref(): void; unref(): void } | null>) {
        if (on) h?.ref(); else h?.unref();
      }
    },
    send(message) {
      child.stdin!.write(`${JSON.stringify(message)}\n`);
    },
  };
}

export function isRunning(c: ChildProcess | undefined): c is ChildProcess {
  return !!c && c.exitCode === null && c.signalCode === null;
}
