// A process on a pseudo-terminal (`kubectl exec -t`, containers with `tty: true`). Node has no
// pty without a native addon, so bin/kdp-pty.py (Python's pty module) runs argv on a new
// terminal, relays stdin/stdout and takes "COLS ROWS" lines on fd 3 as resizes (TIOCSWINSZ).
// Why Python rather than a C helper compiled at first use: python3 is on every machine kdp's
// tests run on (.ci/run installs Debian's), needs no compiler or cache directory, and starts in
// ~30 ms. Debian's /usr/bin/python3 is preferred to whatever `python3` PATH finds first (a pyenv
// shim costs ~200 ms a start). argv is executed as given, never through a shell.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { PassThrough, type Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { kdpError } from '../errors.js';
import type { StreamProcess } from './spawn.js';

export const PTY_SCRIPT = fileURLToPath(new URL('../../bin/kdp-pty.py', import.meta.url));

const SYSTEM_PYTHON = '/usr/bin/python3';

/** The interpreter for the pty helper: Debian's when present, else `python3` from PATH. */
export function ptyPython(): string {
  return existsSync(SYSTEM_PYTHON) ? SYSTEM_PYTHON : 'python3';
}

export interface PtyOptions {
  /** Initial terminal size (default 80×24). */
  readonly cols?: number;
  readonly rows?: number;
  readonly cwd?: string;
  /** Wait up to this long for the client's first size (a resize) before starting the program,
   *  so it starts at the client's size (`kubectl exec -t` sends it first). */
  readonly awaitSizeMs?: number;
}

/** A terminal process also tells its pid (the python relay's; the program is its child). */
export interface PtyProcess extends StreamProcess {
  readonly pid?: number;
  readonly stdout: NonNullable<StreamProcess['stdout']>;
}

/**
 * Runs argv on a new pseudo-terminal. Output (the terminal's, stdout and stderr merged) comes
 * on `stdout`; `stdin` is present when asked for; `exited` gives 0..255, 128+n for signal n,
 * 127 when argv[0] cannot be found. Rejects (KDP_BAD_REQUEST) only when python3 is missing.
 */
export function ptyProcess(argv: readonly string[], stdin: boolean, env: NodeJS.ProcessEnv,
  o: PtyOptions = {}): Promise<PtyProcess> {
  return new Promise((resolve, reject) => {
    if (argv.length === 0) {
      reject(kdpError('KDP_BAD_REQUEST', 'command is required'));
      return;
    }
    const size = (n: number | undefined, d: number) => String(Number.isInteger(n) && n! > 0 && n! < 65536 ? n : d);
    const wait = o.awaitSizeMs && o.awaitSizeMs > 0 ? ['--await-size', String(Math.round(o.awaitSizeMs))] : [];
    const child = spawn(ptyPython(), [PTY_SCRIPT, size(o.cols, 80), size(o.rows, 24), ...wait, '--', ...argv],
      { stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'ignore', 'pipe'], env, cwd: o.cwd });
    const exited = new Promise<number>((done) => {
      child.once('exit', (code, signal) => done(code ?? 128 + (signal ? constants.signals[signal] ?? 0 : 0)));
    });
    child.once('error', (e) => reject(kdpError('KDP_BAD_REQUEST',
      `cannot start a terminal: ${e.message} (python3 is needed for a TTY)`)));
    child.once('spawn', () => {
      // Held so output written before the protocol side reads it is not lost when the child exits.
      const stdout = child.stdout!.pipe(new PassThrough());
      const control = child.stdio[3] as Writable;
      control.on('error', () => undefined);
      child.stdin?.on('error', () => undefined);
      resolve({
        pid: child.pid,
        stdin: child.stdin ?? undefined, stdout,
        resize(cols, rows) {
          if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols <= 0 || rows <= 0) return;
          if (!control.destroyed) control.write(`${Math.min(cols, 65535)} ${Math.min(rows, 65535)}\n`);
        },
        exited,
        close() { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); },
      });
    });
  });
}
