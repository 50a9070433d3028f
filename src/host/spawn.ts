// Starting processes: the one door through which kdp starts a program it keeps running (a
// helper, a watcher, a server, a workload's shell) or runs to its end with its exit status. One-
// shot tools whose failure is an error go through HostExec (exec.ts) instead. Programs always
// run from an argument array, never a shell. `hostSpawner` is the real thing; fake-spawn.ts is
// the fake that fails the same way (a missing program: an `error` event with code ENOENT and no
// pid, then `close` with -2; a signal: exit code null and the signal's name).
//
// Process semantics callers rely on:
// - `detached: true` makes the child lead its own process group (a session), so a terminal's
//   Ctrl-C reaches only kdp, which still needs the child to clean up, and `killGroup` reaches
//   whatever the child left running.
// - A child that must not outlive kdp reads its stdin and exits at end of input: the pipe
//   closes when kdp exits, however it exits (SIGKILL included). Every long-lived helper of kdp
//   follows this rule; recorded processes (state.ts) are also stopped by `kdp down`.

import { spawn as nodeSpawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/** A started process (Node's ChildProcess, or the fake's look-alike). */
export type HostChild = ChildProcess;

/** What one of the child's standard streams is connected to: a pipe, nothing, kdp's own, or
 *  an open file descriptor (a log file). */
export type StdioKind = 'pipe' | 'ignore' | 'inherit' | number;

export interface SpawnOptions {
  /** stdin, stdout, stderr and any further descriptors (default: three pipes). */
  readonly stdio?: readonly StdioKind[];
  /** The whole environment of the child (default: kdp's own). */
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Lead a process group of its own (see above). */
  readonly detached?: boolean;
  /** SIGTERM the child after this long. */
  readonly timeoutMs?: number;
}

export interface Spawner {
  spawn(file: string, args: readonly string[], opts?: SpawnOptions): HostChild;
}

export const hostSpawner: Spawner = {
  spawn(file, args, o = {}) {
    return nodeSpawn(file, [...args], {
      stdio: [...(o.stdio ?? ['pipe', 'pipe', 'pipe'])],
      ...(o.env ? { env: o.env } : {}),
      ...(o.cwd ? { cwd: o.cwd } : {}),
      ...(o.detached ? { detached: true } : {}),
      ...(o.timeoutMs ? { timeout: o.timeoutMs } : {}),
    });
  },
};

/** Signals the child's whole process group (it must have been started `detached`). */
export function killGroup(child: HostChild, signal: NodeJS.Signals): boolean {
  if (child.pid === undefined) return false;
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** The child has started and has not ended. */
export function isRunning(c: HostChild | undefined): c is HostChild {
  return !!c && c.exitCode === null && c.signalCode === null;
}

/** The status of a program run to its end. `code` null: killed by `signal`; 127: it could not
 *  be started (`startError` says why). */
export interface ProgramResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Killed because it ran longer than `timeoutMs`. */
  readonly timedOut: boolean;
  readonly startError?: NodeJS.ErrnoException;
}

export interface RunOptions {
  readonly input?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
  /** How a program over time is killed (default SIGTERM). */
  readonly killSignal?: NodeJS.Signals;
  /** Output kept per stream; more is dropped (default 1 MiB). */
  readonly maxOutput?: number;
}

/** Runs a program to its end and resolves with its status: a non-zero exit is an answer here,
 *  not an error (CNI plugins, exec probes, compilers report through it). Never rejects. */
export function runProgram(spawner: Spawner, file: string, args: readonly string[],
  o: RunOptions = {}): Promise<ProgramResult> {
  const max = o.maxOutput ?? 1 << 20;
  return new Promise((resolve) => {
    const child = spawner.spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], ...(o.env ? { env: o.env } : {}) });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let startError: NodeJS.ErrnoException | undefined;
    const keep = (had: string, d: string) => (had.length < max ? had + d.slice(0, max - had.length) : had);
    (child.stdout as Readable).setEncoding('utf8').on('data', (d: string) => { stdout = keep(stdout, d); });
    (child.stderr as Readable).setEncoding('utf8').on('data', (d: string) => { stderr = keep(stderr, d); });
    const timer = o.timeoutMs ? setTimeout(() => {
      timedOut = true;
      child.kill(o.killSignal ?? 'SIGTERM');
    }, o.timeoutMs) : undefined;
    child.on('error', (e: NodeJS.ErrnoException) => { startError = e; });
    child.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
      if (timer) clearTimeout(timer);
      resolve(startError && child.pid === undefined
        ? { code: 127, signal: null, stdout, stderr: stderr || startError.message, timedOut, startError }
        : { code, signal, stdout, stderr, timedOut });
    });
    const stdin = child.stdin as Writable;
    // A child that exits before reading its input fails through its status, not with EPIPE.
    stdin.on('error', () => undefined);
    stdin.end(o.input ?? '');
  });
}

/**
 * A process a client is connected to: one started by exec, or a container's own main process
 * (attach). A stream is present exactly when its option was requested. For attach, closing
 * `stdin` detaches the client's input; it does not end the container (unless `stdinOnce`).
 * (The kubelet's streaming contract, kubelet/streams.ts, is built on it.)
 */
export interface StreamProcess {
  readonly stdin?: Writable;
  readonly stdout?: Readable;
  readonly stderr?: Readable;
  /** Terminal size changes (tty only); no-op otherwise. */
  resize(cols: number, rows: number): void;
  /**
   * Exit code once the process ends: 0..255, a signal as 128+n. For attach, resolves when the
   * container exits or the client detaches (`undefined`: detached, no status to report).
   */
  readonly exited: Promise<number | undefined>;
  /** Ends the process (exec) or detaches (attach); idempotent. */
  close(): void;
}
