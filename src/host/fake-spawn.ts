// The fake Spawner: programs are functions in memory, and it fails the way Node's spawn does, so
// callers' error paths run without the programs or root. A program not in the table fails to
// start: no pid, an `error` event (`spawn FILE ENOENT`, code ENOENT, errno -2), then `close`
// with -2 and no `exit`. A started one emits `spawn`, then `exit` and `close` with its status;
// kill(signal) ends it with that signal (exit code null), as a program without handlers ends.

import { EventEmitter } from 'node:events';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import type { HostChild, SpawnOptions, Spawner } from './spawn.js';

export interface FakeProgramIO {
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
  /** Aborted when the process is killed; `reason` is the signal. */
  readonly killed: AbortSignal;
}

/** Runs until it returns its exit code (or is killed). */
export type FakeProgram = (io: FakeProgramIO) => number | Promise<number>;

export interface FakeSpawner extends Spawner {
  /** Every start, in order: file and arguments as given. */
  readonly started: Array<{ file: string; args: readonly string[]; opts: SpawnOptions }>;
}

let nextPid = 900_000;

export function buildFakeSpawner(programs: Readonly<Record<string, FakeProgram>>): FakeSpawner {
  const started: FakeSpawner['started'] = [];
  return {
    started,
    spawn(file, args, opts = {}) {
      started.push({ file, args, opts });
      return startFake(programs[file], file, args, opts);
    },
  };
}

function startFake(program: FakeProgram | undefined, file: string, args: readonly string[],
  opts: SpawnOptions): HostChild {
  const child = new EventEmitter() as EventEmitter & {
    pid?: number; exitCode: number | null; signalCode: NodeJS.Signals | null;
    stdin: PassThrough | null; stdout: PassThrough | null; stderr: PassThrough | null;
    stdio: Array<PassThrough | null>; killed: boolean;
    kill(sig?: NodeJS.Signals): boolean; ref(): void; unref(): void;
  };
  const kinds = opts.stdio ?? ['pipe', 'pipe', 'pipe'];
  const pipe = (i: number) => (kinds[i] ?? 'pipe') === 'pipe' ? new PassThrough() : null;
  child.stdin = pipe(0);
  child.stdout = pipe(1);
  child.stderr = pipe(2);
  child.stdio = [child.stdin, child.stdout, child.stderr, ...kinds.slice(3).map((_, i) => pipe(i + 3))];
  child.exitCode = null;
  child.signalCode = null;
  child.killed = false;
  child.ref = () => undefined;
  child.unref = () => undefined;
  const abort = new AbortController();
  let ended = false;
  const end = (code: number | null, signal: NodeJS.Signals | null) => {
    if (ended) return;
    ended = true;
    child.exitCode = code;
    child.signalCode = signal;
    child.stdout?.end();
    child.stderr?.end();
    child.emit('exit', code, signal);
    setImmediate(() => child.emit('close', code, signal));
  };
  child.kill = (sig: NodeJS.Signals = 'SIGTERM') => {
    if (ended || child.pid === undefined) return false;
    child.killed = true;
    abort.abort(sig);
    end(null, sig);
    return true;
  };
  if (!program) {
    child.kill = () => false;
    process.nextTick(() => {
      const e = Object.assign(new Error(`spawn ${file} ENOENT`), {
        errno: -2, code: 'ENOENT', syscall: `spawn ${file}`, path: file, spawnargs: [...args],
      });
      child.emit('error', e);
      child.stdout?.end();
      child.stderr?.end();
      child.emit('close', -2, null);
    });
    return child as unknown as HostChild;
  }
  child.pid = nextPid++;
  const sink = () => new PassThrough().resume();
  const io: FakeProgramIO = {
    args, env: opts.env ?? process.env,
    stdin: child.stdin ?? new PassThrough().end(),
    stdout: child.stdout ?? sink(), stderr: child.stderr ?? sink(),
    killed: abort.signal,
  };
  const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGTERM'), opts.timeoutMs) : undefined;
  process.nextTick(() => {
    child.emit('spawn');
    Promise.resolve().then(() => program(io)).then(
      (code) => { if (timer) clearTimeout(timer); end(code & 0xff, null); },
      (e: unknown) => {
        if (timer) clearTimeout(timer);
        if (ended) return;
        io.stderr.write(`${(e as Error)?.message ?? e}\n`);
        end(1, null);
      });
  });
  return child as unknown as HostChild;
}
