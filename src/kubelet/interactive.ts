// A container with `stdin` or `tty` (kubectl run -it, attach): started from kdp itself rather
// than the launcher helpers, on a pseudo-terminal for `tty` (host/pty.ts) or with a stdin pipe,
// so its input can be fed by attach sessions. Shaped as a launcher Workload for the runtime
// (`spawn`, `data` for the log, `exit`), plus `attach`: each session gets the output from then
// on (stdout and stderr apart without a TTY) and writes to the container's stdin; a session
// ending its input closes the container's stdin only with `stdinOnce` (upstream: after the first
// attach), otherwise it just detaches. argv is executed as given, never through a shell.

import { EventEmitter } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import { ptyProcess } from '../host/pty.js';
import { childProcessStream } from '../streaming/fakes.js';
import type { Workload } from '../host/launcher.js';
import type { StreamOptions, StreamProcess } from './streams.js';

export interface InteractiveWorkload extends Workload {
  /** A session on the container's stdio; undefined once it has exited. */
  attach(opts: StreamOptions): StreamProcess | undefined;
}

interface Session { stdout?: PassThrough; stderr?: PassThrough; done: (code: number | undefined) => void }

export function startInteractive(argv: readonly string[], env: NodeJS.ProcessEnv,
  o: { tty: boolean; stdin: boolean; stdinOnce: boolean }): InteractiveWorkload {
  const events = new EventEmitter();
  const sessions = new Set<Session>();
  let proc: StreamProcess | undefined;
  let stdinClosed = false;
  const w = Object.assign(events, {
    pid: undefined as number | undefined,
    exitCode: null as number | null,
    signalCode: null as NodeJS.Signals | null,
    kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (w.exitCode !== null) return;
      const pid = (proc as { pid?: number } | undefined)?.pid;
      if (pid && signal !== 'SIGKILL') {
        try { process.kill(pid, signal); return; } catch { /* gone: close below */ }
      }
      proc?.close();
    },
    attach(opts: StreamOptions): StreamProcess | undefined {
      if (!proc || w.exitCode !== null) return undefined;
      const p = proc;
      let resolve!: (code: number | undefined) => void;
      const exited = new Promise<number | undefined>((r) => { resolve = r; });
      const s: Session = {
        ...(opts.stdout ? { stdout: new PassThrough() } : {}),
        ...(opts.stderr && !o.tty ? { stderr: new PassThrough() } : {}),
        done: (code) => {
          if (!sessions.delete(s)) return;
          s.stdout?.end();
          s.stderr?.end();
          resolve(code);
        },
      };
      sessions.add(s);
      const stdin = opts.stdin && o.stdin ? new Writable({
        write(chunk: Buffer, _enc, cb) {
          if (stdinClosed || !p.stdin) { cb(); return; }
          p.stdin.write(chunk, () => cb());
        },
        final(cb) {
          if (o.stdinOnce && !stdinClosed) { stdinClosed = true; p.stdin?.end(); }
          cb();
        },
      }) : undefined;
      return {
        ...(stdin ? { stdin } : {}), ...(s.stdout ? { stdout: s.stdout } : {}), ...(s.stderr ? { stderr: s.stderr } : {}),
        resize: (cols, rows) => p.resize(cols, rows),
        exited,
        close: () => s.done(undefined),
      };
    },
  });
  const fan = (which: 'stdout' | 'stderr') => (b: Buffer) => {
    events.emit('data', b.toString('utf8'));
    for (const s of sessions) (which === 'stderr' && s.stderr ? s.stderr : s.stdout)?.write(b);
  };
  const started = o.tty ? ptyProcess(argv, o.stdin, env)
    : childProcessStream(argv, { stdin: o.stdin, stdout: true, stderr: true, tty: false }, env);
  started.then((p) => {
    proc = p;
    w.pid = (p as { pid?: number }).pid;
    events.emit('spawn', w.pid ?? 0);
    p.stdout?.on('data', fan('stdout'));
    p.stderr?.on('data', fan('stderr'));
    // Without a reader the terminal's stdin would never see an end: nothing to do until attach.
    void p.exited.then((code) => {
      w.exitCode = code ?? 0;
      for (const s of [...sessions]) s.done(code ?? 0);
      events.emit('exit', w.exitCode, null);
    });
  }, (e: Error) => {
    events.emit('data', `${e.message}\n`);
    w.exitCode = 128;
    events.emit('exit', 128, null);
  });
  return w as InteractiveWorkload;
}
