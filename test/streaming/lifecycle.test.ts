// Nothing is left running when the client goes away: an exec whose kubectl dies is ended, a
// port-forward whose kubectl dies closes its connections to the pod.

import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamProcess } from '../../src/kubelet/streams.js';
import { childProcessStream, loopbackDial } from '../../src/streaming/fakes.js';
import { startForward, tcpServer } from './helpers/port-forward.js';
import { kubectlMissing, startStreamServer } from './helpers/stream-server.js';
import type { StreamServer } from './helpers/stream-server.js';

let server: StreamServer;
let held: Awaited<ReturnType<typeof tcpServer>>;
const podSockets: Socket[] = [];
const procs: StreamProcess[] = [];

beforeAll(async () => {
  held = await tcpServer((s) => {
    s.on('error', () => {});
    podSockets.push(s);
    s.write('hello');
  });
  server = await startStreamServer({
    start: async (_kind, argv, opts) => {
      const p = await childProcessStream(argv, opts);
      procs.push(p);
      return p;
    },
    dial: loopbackDial(() => held.port),
  });
});
afterAll(async () => {
  await server.close();
  held.close();
});

const until = async (cond: () => boolean, ms = 5000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
};

describe.each([27, 33])('kubectl 1.%i going away', (minor) => {
  it.skipIf(kubectlMissing(minor))('ends the exec\'d process', async () => {
    const before = procs.length;
    const child = server.spawnKubectl(minor, ['exec', 'p', '--', 'sleep', '30']);
    await until(() => procs.length > before);
    const exited = procs[before]!.exited;
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGKILL');
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 5000))]);
    expect(code).toBe(137);
  }, 20_000);

  it.skipIf(kubectlMissing(minor))('closes the port-forwarded connections to the pod', async () => {
    const fwd = await startForward(server, minor, [80]);
    const before = podSockets.length;
    const { connect } = await import('node:net');
    const local = connect(fwd.ports.get(80)!, '127.0.0.1');
    local.on('error', () => {});
    await until(() => podSockets.length > before);
    const pod = podSockets[before]!;
    const closed = new Promise((r) => pod.once('close', () => r('closed')));
    fwd.child.kill('SIGKILL');
    expect(await Promise.race([closed, new Promise((r) => setTimeout(() => r('open'), 5000))])).toBe('closed');
    local.destroy();
  }, 20_000);
});
