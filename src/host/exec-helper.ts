// Running the kernel tools from a small helper process. Node's spawn() forks the calling process
// and waits until the child has exec'd; forking kdp (an API server, a store and every controller,
// hundreds of MiB mapped) costs far more CPU than forking a 40 MiB helper, and blocks the caller's
// loop meanwhile (helper-process.ts). A helper (`node -e`) takes one JSON line per run and
// answers one line; it exits when its stdin closes, so it dies with kdp. A small pool of them
// (started on demand) lets concurrent runs fork side by side. Same contract as the direct
// HostExec (execFile, argument arrays, KDP_HOST_EXEC on failure). While no run is pending a
// helper does not keep kdp alive.

import { kdpError } from '../errors.js';
import { describe, wrapForNetns, type HostExec } from './exec.js';
import { isRunning, startHelperProcess, type HelperProcess } from './helper-process.js';

const HELPER_SOURCE = `
const { execFile } = require('node:child_process');
const pieces = new Map();
require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => {
  let m;
  try { m = JSON.parse(l); } catch { return; }
  if (m.piece !== undefined) {
    let got = pieces.get(m.id);
    if (!got) pieces.set(m.id, got = []);
    got.push(m.piece);
    return;
  }
  if (m.pieced) { m.input = pieces.get(m.id) || []; pieces.delete(m.id); }
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
  if (m.input !== undefined && child.stdin) {
    if (Array.isArray(m.input)) { for (const p of m.input) child.stdin.write(p); child.stdin.end(); }
    else child.stdin.end(m.input);
  }
}).on('close', () => process.exit(0));
`;


interface Reply {
  readonly id: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly failed: boolean;
  readonly code?: string | number;
  readonly message?: string;
}

export interface HelperHostExecOptions {
  /** Helper processes; a run goes to the one with the fewest runs pending (a spawn blocks its
   * helper until the child has exec'd, so nodes applying at once fork side by side). Default 2. */
  readonly helpers?: number;
}

export function buildHelperHostExec(o: HelperHostExecOptions = {}): HostExec {
  const pool = Array.from({ length: Math.max(1, o.helpers ?? 2) }, () => buildOneHelper());
  return {
    run(file, args, opts = {}) {
      const h = pool.reduce((a, b) => (b.pending() < a.pending() ? b : a));
      return h.run(file, args, opts);
    },
  };
}

function buildOneHelper(): HostExec & { pending(): number } {
  let helper: HelperProcess | undefined;
  const waiting = new Map<number, (r: Reply) => void>();
  let nextId = 1;

  function ensure(): HelperProcess {
    if (helper && isRunning(helper.child)) return helper;
    const h = startHelperProcess<Reply>(HELPER_SOURCE, (r) => {
      const done = waiting.get(r.id);
      waiting.delete(r.id);
      if (waiting.size === 0) h.hold(false);
      done?.(r);
    });
    h.child.on('exit', (code, signal) => {
      if (helper === h) helper = undefined;
      const r = { stdout: '', stderr: '', failed: true, code: code ?? signal ?? 'exit',
        message: 'exec helper exited' };
      for (const [id, done] of waiting) {
        waiting.delete(id);
        done({ id, ...r });
      }
    });
    helper = h;
    return h;
  }

  return {
    pending: () => waiting.size,
    run(file, args, opts = {}) {
      const [cmd, argv] = wrapForNetns(file, args, opts);
      const id = nextId++;
      const h = ensure();
      h.hold(true);
      return new Promise((resolve, reject) => {
        waiting.set(id, (r) => {
          if (!r.failed) { resolve({ stdout: r.stdout, stderr: r.stderr }); return; }
          reject(kdpError('KDP_HOST_EXEC',
            `${describe(file, args, opts)} failed (${r.code}): ${r.stderr.trim() || r.message}`));
        });
        const input = opts.input;
        const timeoutMs = opts.timeoutMs ?? 300_000;
        if (typeof input === 'string' || input === undefined) {
          h.send({ id, cmd, argv, input, timeoutMs });
          return;
        }
        // Pieces go one line each (no single line holding the whole text), then the run.
        for (const piece of input) h.send({ id, piece });
        h.send({ id, cmd, argv, pieced: true, timeoutMs });
      });
    },
  };
}
