// The Spawner's fake fails the way Node's spawn does: each case runs against both, and the
// fake's answer must equal the real one's (missing program, exit status, signal, timeout,
// runProgram's status and output).

import { describe, expect, it } from 'vitest';
import { buildFakeSpawner } from '../../src/host/fake-spawn.js';
import { hostSpawner, runProgram, type HostChild, type Spawner } from '../../src/host/spawn.js';

/** Fake programs that behave as the coreutils the real side runs. */
const fake = buildFakeSpawner({
  cat: async ({ stdin, stdout }) => {
    for await (const c of stdin) stdout.write(c);
    return 0;
  },
  false: () => 1,
  sleep: ({ killed }) => new Promise<number>((r) => { killed.addEventListener('abort', () => r(0)); }),
  // Only the one script the real side runs below.
  sh: ({ args, stderr }) => {
    if (args.join(' ') !== '-c echo no >&2; exit 3') return 2;
    stderr.write('no\n');
    return 3;
  },
});

interface Seen { events: string[]; pid: boolean; code?: number | null; signal?: string | null; error?: object }

function watch(c: HostChild): Promise<Seen> {
  const seen: Seen = { events: [], pid: false };
  return new Promise((resolve) => {
    c.on('spawn', () => { seen.events.push('spawn'); seen.pid = c.pid !== undefined; });
    c.on('error', (e: NodeJS.ErrnoException) => {
      seen.events.push('error');
      seen.error = { message: e.message, code: e.code, errno: e.errno, syscall: e.syscall };
    });
    c.on('exit', () => seen.events.push('exit'));
    c.on('close', (code: number | null, signal: string | null) => {
      seen.events.push('close');
      Object.assign(seen, { code, signal });
      resolve(seen);
    });
  });
}

async function both<T>(f: (s: Spawner) => Promise<T>): Promise<[T, T]> {
  return [await f(hostSpawner), await f(fake)];
}

describe('fake Spawner fails like the real one', () => {
  it('a missing program: error ENOENT, no pid, no spawn or exit event, close -2', async () => {
    const [real, faked] = await both((s) => watch(s.spawn('kdp-no-such-program', ['x'])));
    expect(real).toEqual({ events: ['error', 'close'], pid: false, code: -2, signal: null,
      error: { message: 'spawn kdp-no-such-program ENOENT', code: 'ENOENT', errno: -2, syscall: 'spawn kdp-no-such-program' } });
    expect(faked).toEqual(real);
  });

  it('an exit status', async () => {
    const [real, faked] = await both((s) => watch(s.spawn('false', [])));
    expect(real).toMatchObject({ events: ['spawn', 'exit', 'close'], pid: true, code: 1, signal: null });
    expect(faked).toEqual(real);
  });

  it('kill: exit code null and the signal, exitCode/signalCode set', async () => {
    const [real, faked] = await both(async (s) => {
      const c = s.spawn('sleep', ['30']);
      await new Promise((r) => c.once('spawn', r));
      const seen = watch(c);
      c.kill('SIGTERM');
      return { ...(await seen), exitCode: c.exitCode, signalCode: c.signalCode };
    });
    expect(real).toMatchObject({ code: null, signal: 'SIGTERM', exitCode: null, signalCode: 'SIGTERM' });
    expect(faked).toEqual(real);
  });

  it('runProgram: input, output and status; a missing program is 127; a timeout kills', async () => {
    const [cat, fcat] = await both((s) => runProgram(s, 'cat', [], { input: 'a\nb\n' }));
    expect(cat).toEqual({ code: 0, signal: null, stdout: 'a\nb\n', stderr: '', timedOut: false });
    expect(fcat).toEqual(cat);
    const [sh, fsh] = await both((s) => runProgram(s, 'sh', ['-c', 'echo no >&2; exit 3']));
    expect(sh).toMatchObject({ code: 3, stderr: 'no\n' });
    expect(fsh).toEqual(sh);
    const [none, fnone] = await both((s) => runProgram(s, 'kdp-no-such-program', []));
    expect(none).toMatchObject({ code: 127, stderr: 'spawn kdp-no-such-program ENOENT', timedOut: false });
    expect({ ...fnone, startError: undefined }).toEqual({ ...none, startError: undefined });
    const [slow, fslow] = await both((s) => runProgram(s, 'sleep', ['30'], { timeoutMs: 100, killSignal: 'SIGKILL' }));
    expect(slow).toEqual({ code: null, signal: 'SIGKILL', stdout: '', stderr: '', timedOut: true });
    expect(fslow).toEqual(slow);
  });

  it('records what was started', () => {
    expect(fake.started.map((s) => s.file)).toContain('kdp-no-such-program');
  });
});
