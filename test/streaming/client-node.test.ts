// @kubernetes/client-node's Exec, Attach and PortForward (WebSocket channel protocols: v5 for
// exec/attach, v4.channel.k8s.io with ?ports= for port-forward) against src/streaming.

import { Attach, Exec, KubeConfig, PortForward } from '@kubernetes/client-node';
import type { V1Status } from '@kubernetes/client-node';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childProcessStream, echoProcess, loopbackDial } from '../../src/streaming/fakes.js';
import { echoHandler, tcpServer } from './helpers/port-forward.js';
import { startStreamServer } from './helpers/stream-server.js';
import type { StreamServer } from './helpers/stream-server.js';

let server: StreamServer;
let echo: Awaited<ReturnType<typeof tcpServer>>;
let kc: KubeConfig;

beforeAll(async () => {
  echo = await tcpServer(echoHandler);
  server = await startStreamServer({
    start: async (kind, argv, opts) => (kind === 'attach' ? echoProcess(opts, true) : childProcessStream(argv, opts)),
    dial: loopbackDial((p) => (p === 80 ? echo.port : 1)),
  });
  kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 't', server: server.url, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 't', cluster: 't', user: 'u', namespace: 'default' }],
    currentContext: 't',
  });
});
afterAll(async () => {
  await server.close();
  echo.close();
});

function collect(s: PassThrough): () => string {
  const parts: Buffer[] = [];
  s.on('data', (d: Buffer) => parts.push(d));
  return () => Buffer.concat(parts).toString();
}

describe('@kubernetes/client-node', () => {
  it('Exec pipes stdin (its end closes the channel) and reports the exit code', async () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const stdin = new PassThrough();
    const out = collect(stdout);
    const err = collect(stderr);
    const status = await new Promise<V1Status>((resolve) => {
      void new Exec(kc).exec('default', 'p', 'c', ['sh', '-c', 'cat; echo oops >&2; exit 2'],
        stdout, stderr, stdin, false, resolve);
      stdin.end('from client-node\n');
    });
    expect(out()).toBe('from client-node\n');
    expect(err()).toBe('oops\n');
    expect(status).toMatchObject({
      status: 'Failure', reason: 'NonZeroExitCode',
      message: 'command terminated with non-zero exit code: error executing command '
        + '[sh -c cat; echo oops >&2; exit 2], exit code 2',
      details: { causes: [{ reason: 'ExitCode', message: '2' }] },
    });
    expect(server.upgrades.at(-1)?.protocols).toContain('v5.channel.k8s.io');
  });

  it('Exec of a successful command reports Success', async () => {
    const stdout = new PassThrough();
    const out = collect(stdout);
    const status = await new Promise<V1Status>((resolve) => {
      void new Exec(kc).exec('default', 'p', 'c', ['echo', 'ok'], stdout, null, null, false, resolve);
    });
    expect(status).toEqual({ metadata: {}, status: 'Success' });
    expect(out()).toBe('ok\n');
  });

  it('Attach shows the container\'s output for its input', async () => {
    const stdout = new PassThrough();
    const stdin = new PassThrough();
    const out = collect(stdout);
    const ws = await new Attach(kc).attach('default', 'p', 'c', stdout, null, stdin, false);
    stdin.write('attached\n');
    await new Promise((r) => setTimeout(r, 200));
    expect(out()).toBe('ATTACHED\n');
    ws.close();
  });

  it('PortForward carries a connection\'s bytes to the pod port', async () => {
    const output = new PassThrough();
    const input = new PassThrough();
    const out = collect(output);
    const ws = await new PortForward(kc).portForward('default', 'p', [80], output, null, input);
    input.write('ping over websocket');
    const deadline = Date.now() + 5000;
    while (out() !== 'ping over websocket' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(out()).toBe('ping over websocket');
    expect(server.upgrades.at(-1)).toMatchObject({ path: '/api/v1/namespaces/default/pods/p/portforward' });
    (ws as { close(): void }).close();
  });
});
