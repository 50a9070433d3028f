// Running the kernel tools from worker threads. Node's spawn() is synchronous up to the child's
// exec (libuv forks, then waits on a pipe for exec to succeed or fail), so every tool run blocks
// the caller's event loop for that long: ~1 ms on an idle machine, tens of ms on a loaded one —
// with hundreds of runs (namespaces, CNI, kube-proxy applies) the API server and every control
// loop of an in-process cluster stall behind them. Here each run goes to the least busy of a few
// worker threads, each with its own event loop; the caller's loop only posts a message. Same
// contract as the direct HostExec (execFile, argument arrays, KDP_HOST_EXEC on failure).

import { Worker } from 'node:worker_threads';
import { kdpError } from '../errors.js';
import { describe, wrapForNetns, type HostExec } from './exec.js';

/** The worker's body (CommonJS, evaluated): execFile per message, the outcome posted back. */
const WORKER = `
const { parentPort } = require('node:worker_threads');
const { execFile } = require('node:child_process');
parentPort.on('message', (m) => {
  const child = execFile(m.cmd, m.argv, { timeout: m.timeoutMs, maxBuffer: 256 * 1024 * 1024,
    encoding: 'utf8' }, (err, stdout, stderr) => {
    parentPort.postMessage({ id: m.id, stdout, stderr, failed: !!err,
      code: err ? (err.code ?? 'signal') : undefined, message: err ? err.message : undefined });
  });
  child.stdin && child.stdin.on('error', () => {});
  if (m.input !== undefined && child.stdin) child.stdin.end(m.input);
});
`;

interface Reply {
  readonly id: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly failed: boolean;
  readonly code?: string | number;
  readonly message?: string;
}

interface Slot {
  readonly worker: Worker;
  pending: number;
}

export function buildThreadedHostExec(threads = 4): HostExec {
  const slots: Slot[] = [];
  const waiting = new Map<number, (r: Reply) => void>();
  let nextId = 1;

  function slot(): Slot {
    const idle = slots.find((s) => s.pending === 0);
    if (idle || slots.length >= threads) {
      return idle ?? slots.reduce((a, b) => (b.pending < a.pending ? b : a));
    }
    const worker = new Worker(WORKER, { eval: true });
    const s: Slot = { worker, pending: 0 };
    worker.on('message', (r: Reply) => {
      s.pending--;
      if (s.pending === 0) worker.unref(); // idle workers never keep the process alive
      const done = waiting.get(r.id);
      waiting.delete(r.id);
      done?.(r);
    });
    worker.unref();
    slots.push(s);
    return s;
  }

  return {
    run(file, args, opts = {}) {
      const [cmd, argv] = wrapForNetns(file, args, opts);
      const id = nextId++;
      const s = slot();
      s.pending++;
      s.worker.ref();
      return new Promise((resolve, reject) => {
        waiting.set(id, (r) => {
          if (!r.failed) { resolve({ stdout: r.stdout, stderr: r.stderr }); return; }
          reject(kdpError('KDP_HOST_EXEC',
            `${describe(file, args, opts)} failed (${r.code}): ${r.stderr.trim() || r.message}`));
        });
        s.worker.postMessage({
          id, cmd, argv, input: opts.input, timeoutMs: opts.timeoutMs ?? 300_000,
        });
      });
    },
  };
}
