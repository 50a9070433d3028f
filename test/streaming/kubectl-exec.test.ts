// Real kubectl builds (SPDY for 1.27, WebSocket v5 for 1.30+) against src/streaming through a
// stand-in API server whose "container" is a host child process.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childProcessStream } from '../../src/streaming/fakes.js';
import { kubectlMissing, startStreamServer } from './helpers/stream-server.js';
import type { StreamServer } from './helpers/stream-server.js';

const MINORS = [27, 28, 29, 30, 31, 32, 33];

let server: StreamServer;
beforeAll(async () => {
  server = await startStreamServer({ start: (_kind, argv, opts) => childProcessStream(argv, opts) });
});
afterAll(async () => { await server.close(); });

describe.each(MINORS)('kubectl 1.%i exec', (minor) => {
  it.skipIf(kubectlMissing(minor))('prints stdout and stderr and exits with the command\'s code', async () => {
    const r = await server.kubectl(minor, ['exec', 'p', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(r.stdout).toBe('out\n');
    expect(r.stderr).toBe('err\ncommand terminated with exit code 3\n');
    expect(r.code).toBe(3);
  });

  it.skipIf(kubectlMissing(minor))('exits 0 after a successful command', async () => {
    const r = await server.kubectl(minor, ['exec', 'p', '--', 'echo', 'a b', '$HOME']);
    expect(r).toEqual({ code: 0, stdout: 'a b $HOME\n', stderr: '' });
  });

  it.skipIf(kubectlMissing(minor))('pipes stdin to the command with -i and delivers its end', async () => {
    const input = Buffer.alloc(300_000, 'x');
    const r = await server.kubectl(minor, ['exec', '-i', 'p', '--', 'sh', '-c', 'wc -c; echo done'],
      { input });
    expect(r.stdout.trim().split('\n')).toEqual(['300000', 'done']);
    expect(r.code).toBe(0);
  });

  it.skipIf(kubectlMissing(minor))('streams large output completely', async () => {
    const r = await server.kubectl(minor, ['exec', 'p', '--', 'head', '-c', '5000000', '/dev/zero']);
    expect(r.code).toBe(0);
    expect(r.stdout.length).toBe(5_000_000);
  });

  it.skipIf(kubectlMissing(minor))('a command that cannot start is a clear error', async () => {
    const r = await server.kubectl(minor, ['exec', 'p', '--', 'no-such-binary-kdp']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('executable file not found in $PATH');
  });
});

describe('negotiation', () => {
  it.skipIf(kubectlMissing(33))('kubectl 1.33 offers v5 over WebSocket and 1.27 SPDY v4..v1', async () => {
    const before = server.upgrades.length;
    await server.kubectl(33, ['exec', 'p', '--', 'true']);
    await server.kubectl(27, ['exec', 'p', '--', 'true']);
    const seen = server.upgrades.slice(before);
    expect(seen[0]).toMatchObject({ method: 'GET', protocols: 'v5.channel.k8s.io' });
    expect(seen[1]).toMatchObject({ method: 'POST',
      protocols: 'v4.channel.k8s.io, v3.channel.k8s.io, v2.channel.k8s.io, channel.k8s.io' });
  });
});

describe('fallback', () => {
  it.skipIf(kubectlMissing(33))('kubectl 1.33 execs over SPDY when the WebSocket upgrade is refused', async () => {
    const refusing = await startStreamServer({
      start: (_kind, argv, opts) => childProcessStream(argv, opts), refuseWebSocket: true,
    });
    try {
      const r = await refusing.kubectl(33, ['exec', '-i', 'p', '--', 'sh', '-c', 'cat; exit 6'], { input: 'via spdy\n' });
      expect(r).toEqual({ code: 6, stdout: 'via spdy\n', stderr: 'command terminated with exit code 6\n' });
      expect(refusing.upgrades.map((u) => u.method)).toEqual(['GET', 'POST']);
    } finally {
      await refusing.close();
    }
  });
});
