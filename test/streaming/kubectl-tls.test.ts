// The same protocols over HTTPS (the kubelet and API server serve TLS): upgraded sockets are
// TLS sockets, for SPDY, WebSocket and the SPDY-in-WebSocket tunnel alike.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childProcessStream, loopbackDial } from '../../src/streaming/fakes.js';
import { exchange, startForward, tagHandler, tcpServer } from './helpers/port-forward.js';
import { kubectlMissing, startStreamServer } from './helpers/stream-server.js';
import type { StreamServer } from './helpers/stream-server.js';

let server: StreamServer;
let tag: Awaited<ReturnType<typeof tcpServer>>;
beforeAll(async () => {
  tag = await tcpServer(tagHandler('over-tls'));
  server = await startStreamServer({
    tls: true,
    start: (_kind, argv, opts) => childProcessStream(argv, opts),
    dial: loopbackDial(() => tag.port),
  });
});
afterAll(async () => {
  await server.close();
  tag.close();
});

describe.each([27, 33])('kubectl 1.%i over HTTPS', (minor) => {
  it.skipIf(kubectlMissing(minor))('exec -i and port-forward work', async () => {
    expect(server.url.startsWith('https://')).toBe(true);
    const r = await server.kubectl(minor, ['exec', '-i', 'p', '--', 'sh', '-c', 'cat; exit 5'], { input: 'tls\n' });
    expect(r).toEqual({ code: 5, stdout: 'tls\n', stderr: 'command terminated with exit code 5\n' });
    const fwd = await startForward(server, minor, [80]);
    try {
      expect((await exchange(fwd.ports.get(80)!, 'x')).toString()).toBe('over-tls');
    } finally {
      await fwd.stop();
    }
  }, 30_000);
});
