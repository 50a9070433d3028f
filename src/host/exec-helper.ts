// Running the kernel tools from a small helper process. Node's spawn() forks the calling process
// and waits until the child has exec'd; forking kdp (an API server, a store and every controller,
// hundreds of MiB mapped) costs far more CPU than forking a 40 MiB helper, and blocks the caller's
// loop meanwhile (exec-threads.ts moved the wait off the main loop but not the fork's cost). The
// helper (`node -e`) takes one JSON line per run and answers one line; it exits when its stdin
// closes, so it dies with kdp. Same contract as the direct HostExec (execFile, argument arrays,
// KDP_HOST_EXEC on failure). While no run is pending the helper does not keep kdp alive.

import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { kdpError } from '../errors.js';
import { describe, wrapForNetns, type HostExec } from './exec.js';

const HELPER_SOURCE = `
const { execFile } = require('node:child_process');
require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => {
  let m;
  try { m = JSON.parse(l); } catch { return; }
  let child;
  const reply = (err, stdout, stderr) => process.stdout.write(JSON.stringify({ id: m.id,
    stdout: String(stdout ?? ''), stderr: String(stderr ?? ''), failed: !!err,
    code: err ? (err.code ?? 'signal') : undefined,
    message: err ? err.message : undefined }) + '\\n');
  try {
    child = execFile(m.cmd, m.argv, { timeout: m.timeoutMs, maxBuffer: 256 * 1024 * 1024,
      encoding: 'utf8' }, reply);
  } catch (e) { reply(e, '', ''); return; }
  child.stdin && child.stdin.on('error', () => {});
  if (m.input !== undefined && child.stdin) child.stdin.end(m.input);
}).on('close', () => process.exit(0));
`;

const NODE_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=64', '--v8-pool-size=0'];

interface Reply {
  readonly id: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly failed: boolean;
  readonly code?: string | number;
  readonly message?: string;
}

export function buildHelperHostExec(): HostExec {
  let helper: ChildProcess | undefined;
  const waiting = new Map<number, (r: Reply) => void>();
  let nextId = 1;

  /** The helper keeps the process alive only while a run is pending. */
  function hold(c: ChildProcess, on: boolean): void {
    for (const h of [c, c.stdin, c.stdout] as Array<{ ref(): void; unref(): void } | null>) {
      if (on) h?.ref(); else h?.unref();
    }
  }

  function ensure(): ChildProcess {
    if (helper && helper.exitCode === null && helper.signalCode === null) return helper;
    // Its own process group: a terminal's Ctrl-C goes to kdp, which still needs the helper to
    // clean up; the helper exits when kdp closes its stdin (or dies).
    const c = spawn(process.execPath, [...NODE_FLAGS, '-e', HELPER_SOURCE], {
      stdio: ['pipe', 'pipe', 'ignore'], detached: true,
    });
    c.stdin!.on('error', () => undefined);
    createInterface({ input: c.stdout! }).on('line', (l) => {
      let r: Reply;
      try { r = JSON.parse(l) as Reply; } catch { return; }
      const done = waiting.get(r.id);
      waiting.delete(r.id);
      if (waiting.size === 0) hold(c, false);
      done?.(r);
    });
    c.on('exit', (code, signal) => {
      if (helper === c) helper = undefined;
      const r = { stdout: '', stderr: '', failed: true, code: code ?? signal ?? 'exit',
        message: 'exec helper exited' };
      for (const [id, done] of waiting) {
        waiting.delete(id);
        done({ id, ...r });
      }
    });
    helper = c;
    return c;
  }

  return {
    run(file, args, opts = {}) {
      const [cmd, argv] = wrapForNetns(file, args, opts);
      const id = nextId++;
      const c = ensure();
      hold(c, true);
      return new Promise((resolve, reject) => {
        waiting.set(id, (r) => {
          if (!r.failed) { resolve({ stdout: r.stdout, stderr: r.stderr }); return; }
          reject(kdpError('KDP_HOST_EXEC',
            `${describe(file, args, opts)} failed (${r.code}): ${r.stderr.trim() || r.message}`));
        });
        c.stdin!.write(`${JSON.stringify({
          id, cmd, argv, input: opts.input, timeoutMs: opts.timeoutMs ?? 300_000,
        })}\n`);
      });
    },
  };
}
