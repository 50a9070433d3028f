// Stand-ins for a runtime's streaming side, for tests and for callers without namespaces:
// a StreamProcess from a host child process (argv array, no shell), an in-memory echo, and a
// loopback dialer. They fail the way the real ones do (exit codes, connection refused).

import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import type { Duplex } from 'node:stream';
import { constants } from 'node:os';
import { kdpError } from '../errors.js';
import { hostSpawner, type Spawner } from '../host/spawn.js';
import type { StreamOptions, StreamProcess } from '../kubelet/streams.js';

/**
 * Runs argv on the host as an exec would run it in a container (no TTY device: with `tty`
 * stderr is merged into stdout, and resizes are recorded in `sizes`).
 */
export function childProcessStream(
  argv: readonly string[], opts: StreamOptions, env?: NodeJS.ProcessEnv, spawner: Spawner = hostSpawner,
): Promise<StreamProcess & { readonly sizes: Array<[number, number]> }> {
  return new Promise((resolve, reject) => {
    if (argv.length === 0) {
      reject(kdpError('KDP_BAD_REQUEST', 'command is required'));
      return;
    }
    const child = spawner.spawn(argv[0]!, argv.slice(1), {
      stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], env: env ?? process.env,
    });
    const sizes: Array<[number, number]> = [];
    let exitCode: number | undefined;
    const exited = new Promise<number>((done) => {
      child.once('exit', (code, signal) => {
        exitCode = code ?? 128 + (signal ? constants.signals[signal] ?? 0 : 0);
        done(exitCode);
      });
    });
    child.once('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'ENOENT' ? 'executable file not found in $PATH' : err.message;
      reject(kdpError('KDP_BAD_REQUEST', 'failed to exec in container: starting container '
        + `process caused: exec: "${argv[0]}": ${why}`));
    });
    child.once('spawn', () => {
      // Node resumes (discards) a child's unread stdio when it exits; hold the output in
      // PassThroughs until the protocol side reads it (pipe keeps backpressure).
      const hold = (s: NodeJS.ReadableStream): PassThrough => s.pipe(new PassThrough());
      let stdout: PassThrough | undefined;
      let stderr: PassThrough | undefined;
      if (opts.tty) {
        const merged = new PassThrough();
        let open = 2;
        for (const s of [child.stdout!, child.stderr!]) {
          s.pipe(merged, { end: false });
          s.once('end', () => { if (--open === 0) merged.end(); });
        }
        stdout = merged;
      } else {
        stdout = opts.stdout ? hold(child.stdout!) : undefined;
        stderr = opts.stderr ? hold(child.stderr!) : undefined;
        if (!stdout) child.stdout!.resume();
        if (!stderr) child.stderr!.resume();
      }
      resolve({
        stdin: child.stdin ?? undefined,
        stdout,
        stderr,
        sizes,
        resize(cols, rows) { sizes.push([cols, rows]); },
        exited,
        close() { if (exitCode === undefined) child.kill('SIGKILL'); },
      });
    });
  });
}

/**
 * An attach target in memory: what is written to stdin comes back on stdout (upper-cased when
 * `upper`); ends with 0 when stdin ends, or `undefined` (detached) on close().
 */
export function echoProcess(opts: StreamOptions, upper = false): StreamProcess {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let finish!: (code: number | undefined) => void;
  const exited = new Promise<number | undefined>((r) => { finish = r; });
  stdin.on('data', (c: Buffer) => {
    stdout.write(upper ? Buffer.from(c.toString().toUpperCase()) : c);
  });
  stdin.on('end', () => {
    stdout.end();
    finish(0);
  });
  return {
    stdin: opts.stdin ? stdin : undefined,
    stdout: opts.stdout ? stdout : undefined,
    resize() {},
    exited,
    close() {
      stdout.end();
      finish(undefined);
    },
  };
}

/**
 * Dials 127.0.0.1 (or `host`) for a pod port; `mapPort` lets a test put the "pod's" port
 * anywhere. A failed connect rejects with KDP_BAD_REQUEST and Go's dial error text.
 */
export function loopbackDial(
  mapPort: (port: number) => number = (p) => p, host = '127.0.0.1',
): (port: number) => Promise<Duplex> {
  return (port) => new Promise((resolve, reject) => {
    const target = mapPort(port);
    const sock = connect({ host, port: target, noDelay: true });
    sock.once('connect', () => {
      sock.off('error', onError);
      resolve(sock);
    });
    const onError = (err: NodeJS.ErrnoException): void => {
      const why = err.code === 'ECONNREFUSED' ? 'connect: connection refused' : err.message;
      reject(kdpError('KDP_BAD_REQUEST', `dial tcp ${host}:${port}: ${why}`));
    };
    sock.once('error', onError);
  });
}
