// Real `kubectl port-forward` (SPDY for 1.27, SPDY tunnelled in WebSocket for 1.31+, SPDY again
// when the WebSocket upgrade is refused) against src/streaming, to loopback "pod" servers.

import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackDial } from '../../src/streaming/fakes.js';
import { echoHandler, exchange, startForward, tagHandler, tcpServer } from './helpers/port-forward.js';
import { kubectlMissing, startStreamServer } from './helpers/stream-server.js';
import type { StreamServer } from './helpers/stream-server.js';

type Srv = Awaited<ReturnType<typeof tcpServer>>;
let echo: Srv;
let tagA: Srv;
let tagB: Srv;
let server: StreamServer;
let refusing: StreamServer;

beforeAll(async () => {
  echo = await tcpServer(echoHandler);
  tagA = await tcpServer(tagHandler('port-81'));
  tagB = await tcpServer(tagHandler('port-82'));
  // Pod port 80 = echo, 81/82 = tagged answers, anything else = nothing listening.
  const map: Record<number, number> = { 80: echo.port, 81: tagA.port, 82: tagB.port };
  const dial = loopbackDial((p) => map[p] ?? 1);
  const start = (): Promise<never> => Promise.reject(new Error('no exec here'));
  server = await startStreamServer({ start, dial });
  refusing = await startStreamServer({ start, dial, refuseWebSocket: true });
});
afterAll(async () => {
  await server.close();
  await refusing.close();
  for (const s of [echo, tagA, tagB]) s.close();
});

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

describe.each([27, 28, 29, 30, 31, 32, 33])('kubectl 1.%i port-forward', (minor) => {
  it.skipIf(kubectlMissing(minor))('forwards several ports, 100 sequential and 20 parallel connections', async () => {
    const fwd = await startForward(server, minor, [80, 81, 82]);
    try {
      for (let i = 0; i < 100; i++) {
        const port = 81 + (i % 2);
        expect((await exchange(fwd.ports.get(port)!, 'x')).toString()).toBe(`port-${port}`);
      }
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) =>
        exchange(fwd.ports.get(80)!, `hello ${i}`)));
      expect(answers.map(String)).toEqual(Array.from({ length: 20 }, (_, i) => `hello ${i}`));
    } finally {
      await fwd.stop();
    }
  }, 60_000);

  it.skipIf(kubectlMissing(minor))('carries 16 MB both ways intact', async () => {
    const fwd = await startForward(server, minor, [80]);
    try {
      const data = randomBytes(16 * 1024 * 1024);
      const back = await exchange(fwd.ports.get(80)!, data, 30_000, data.length);
      expect(back.length).toBe(data.length);
      expect(sha(back)).toBe(sha(data));
    } finally {
      await fwd.stop();
    }
  }, 60_000);

  it.skipIf(kubectlMissing(minor))('a port nothing listens on gets upstream\'s error text', async () => {
    const fwd = await startForward(server, minor, [9]);
    try {
      const got = await exchange(fwd.ports.get(9)!, 'x').catch(() => Buffer.alloc(0));
      expect(got.length).toBe(0);
      await new Promise((r) => setTimeout(r, 300));
      expect(fwd.output()).toContain('an error occurred forwarding');
      expect(fwd.output()).toContain('error forwarding port 9 to pod p, uid : '
        + 'dial tcp 127.0.0.1:9: connect: connection refused');
    } finally {
      await fwd.stop();
    }
  }, 30_000);
});

describe('protocol choice', () => {
  it.skipIf(kubectlMissing(33))('1.33 tunnels SPDY in a WebSocket; 1.27 speaks SPDY', async () => {
    for (const [minor, method, protocols] of [[33, 'GET', 'SPDY/3.1+portforward.k8s.io'],
      [27, 'POST', 'portforward.k8s.io']] as const) {
      const before = server.upgrades.length;
      const fwd = await startForward(server, minor, [81]);
      try {
        expect((await exchange(fwd.ports.get(81)!, 'x')).toString()).toBe('port-81');
      } finally {
        await fwd.stop();
      }
      expect(server.upgrades.slice(before)).toEqual([
        { method, path: '/api/v1/namespaces/default/pods/p/portforward', protocols }]);
    }
  }, 30_000);

  it.skipIf(kubectlMissing(33))('1.33 falls back to SPDY when the WebSocket upgrade is refused', async () => {
    const fwd = await startForward(refusing, 33, [81]);
    try {
      expect((await exchange(fwd.ports.get(81)!, 'x')).toString()).toBe('port-81');
    } finally {
      await fwd.stop();
    }
    expect(refusing.upgrades.map((u) => u.method)).toEqual(['GET', 'POST']);
  }, 30_000);
});
