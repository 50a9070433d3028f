// Real kubectl attach (to an in-memory echo "container") and exec -it on a pseudo-terminal,
// with the terminal's size and a resize reaching the process.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamProcess } from '../../src/kubelet/streams.js';
import { childProcessStream, echoProcess } from '../../src/streaming/fakes.js';
import { kubectlMissing, kubectlPath, startStreamServer } from './helpers/stream-server.js';
import type { StreamServer } from './helpers/stream-server.js';

const PTY_RUN = join(import.meta.dirname, 'helpers', 'pty-run.py');

let server: StreamServer;
const started: Array<StreamProcess & { sizes?: Array<[number, number]> }> = [];
const seenOpts: Array<{ kind: string; tty: boolean; stdin: boolean }> = [];

beforeAll(async () => {
  server = await startStreamServer({
    async start(kind, argv, opts) {
      seenOpts.push({ kind, tty: opts.tty, stdin: opts.stdin });
      const p = kind === 'attach' ? echoProcess(opts, true) : await childProcessStream(argv, opts);
      started.push(p);
      return p;
    },
  });
});
afterAll(async () => { await server.close(); });

function onPty(minor: number, size: [number, number], resized: [number, number], input: string,
  args: string[]): Promise<{ code: number; out: string }> {
  const kubeconfig = join(server.dir, 'kubeconfig');
  const argv = [PTY_RUN, String(size[0]), String(size[1]), String(resized[0]), String(resized[1]), input,
    '--', kubectlPath(minor), '--kubeconfig', kubeconfig, '--cache-dir', join(server.dir, `c${minor}`),
    ...args];
  return new Promise((resolve) => {
    execFile('python3', argv, { timeout: 30_000, env: { PATH: process.env.PATH ?? '', HOME: server.dir } },
      (err, stdout) => resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout }));
  });
}

describe.each([27, 33])('kubectl 1.%i', (minor) => {
  it.skipIf(kubectlMissing(minor))('attach -i sends stdin to the container and shows its output', async () => {
    const r = await server.kubectl(minor, ['attach', '-i', 'p', '-c', 'c'], { input: 'hello attach\n' });
    expect(r.stdout).toBe('HELLO ATTACH\n');
    expect(r.code).toBe(0);
    expect(seenOpts.at(-1)).toEqual({ kind: 'attach', tty: false, stdin: true });
  });

  it.skipIf(kubectlMissing(minor))('exec -it runs with a TTY: initial size, a resize, input and exit code', async () => {
    const before = started.length;
    const r = await onPty(minor, [101, 31], [120, 40], 'typed\n',
      ['exec', '-it', 'p', '--', 'sh', '-c', 'read x; echo "got:$x"; exit 4']);
    expect(r.out).toContain('got:typed');
    expect(r.code).toBe(4);
    expect(seenOpts.at(-1)).toEqual({ kind: 'exec', tty: true, stdin: true });
    const sizes = started[before]!.sizes!;
    expect(sizes[0]).toEqual([101, 31]);
    expect(sizes).toContainEqual([120, 40]);
  }, 40_000);
});
