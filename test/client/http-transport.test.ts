// Request transport behaviour against a throwaway node:http server.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { buildHttpClient, type HttpClient } from '../../src/client/http-client.js';

let server: Server | undefined;
let client: HttpClient | undefined;

afterEach(async () => {
  client?.close();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'ns1' };

describe('HTTP requests on kept-alive connections', () => {
  it('retries once on a new connection when the server dropped the idle one', async () => {
    const sockets = new Map<unknown, number>();
    server = createServer((req, res) => {
      const n = (sockets.get(req.socket) ?? 0) + 1;
      sockets.set(req.socket, n);
      if (n === 2) {
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Pod', metadata: { name: `p${sockets.size}` } }));
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    client = buildHttpClient({ server: `http://127.0.0.1:${port}` });
    expect((await client.get(PODS, 'p')).metadata.name).toBe('p1');
    expect((await client.get(PODS, 'p')).metadata.name).toBe('p2');
    expect(sockets.size).toBe(2);
  });
});
