// A process on a pseudo-terminal, for `kubectl exec -t`: bin/kdp-pty.py (Python's pty module:
// Node has no pty without a native addon) runs argv on a new terminal, relays stdin/stdout and
// takes "COLS ROWS" lines on fd 3 as resizes. argv is executed as given, never through a shell.

import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { PassThrough, type Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { kdpError } from '../errors.js';
import type { StreamProcess } from '../kubelet/streams.js';

export const PTY_SCRIPT = fileURLToPath(new URL('../../bin/kdp-pty.py', import.meta.url));

export function ptyProcess(argv: readonly string[], stdin: boolean, env: NodeJS.ProcessEnv): Promise<StreamProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [PTY_SCRIPT, '80', '24', '--', ...argv],
      { stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'ignore', 'pipe'], env });
    const exited = new Promise<number>((done) => {
      child.once('exit', (code, signal) => done(code ?? 128 + (signal ? constants.signals[signal] ?? 0 : 0)));
    });
    child.once('error', (e) => reject(kdpError('KDP_BAD_REQUEST', `cannot start a terminal: ${e.message} (python3 is needed for -t)`)));
    child.once('spawn', () => {
      // Held so output written before the protocol side reads it is not lost when the child exits.
      const stdout = child.stdout!.pipe(new PassThrough());
      const control = child.stdio[3] as Writable;
      control.on('error', () => undefined);
      resolve({
        stdin: child.stdin ?? undefined, stdout,
        resize(cols, rows) { if (!control.destroyed) control.write(`${cols} ${rows}\n`); },
        exited,
        close() { if (child.exitCode === null) child.kill('SIGKILL'); },
      });
    });
  });
}
