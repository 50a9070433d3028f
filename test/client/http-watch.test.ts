// Watch stream handling against a throwaway node:http server whose behaviour each test scripts.
import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { buildHttpClient, type HttpClient } from '../../src/client/http-client.js';
import type { WatchEvent } from '../../src/client/types.js';
import type { KdpError } from '../../src/errors.js';

let server: Server | undefined;
let client: HttpClient | undefined;

afterEach(async () => {
  client?.close();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function serve(handler: (url: string, res: ServerResponse) => void): Promise<HttpClient> {
  server = createServer((req, res) => handler(req.url ?? '', res));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  client = buildHttpClient({ server: `http://127.0.0.1:${port}` });
  return client;
}

const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'ns1' };
const ev = (type: string, name: string) =>
  JSON.stringify({ type, object: { kind: 'Pod', metadata: { name } } });

function collect(c: HttpClient, opts = {}) {
  const events: WatchEvent[] = [];
  const closed = new Promise<Error | undefined>((resolve) => {
    c.watch(PODS, opts, { onEvent: (e) => events.push(e), onClose: resolve });
  });
  return { events, closed };
}

describe('HTTP watch', () => {
  it('sends the watch query and parses events split across chunks', async () => {
    let seenUrl = '';
    const c = await serve((url, res) => {
      seenUrl = url;
      res.writeHead(200, { 'content-type': 'application/json' });
      const two = `${ev('ADDED', 'a')}\n${ev('MODIFIED', 'a')}\n`;
      res.write(two.slice(0, 17));
      setTimeout(() => { res.write(two.slice(17)); res.end(`${ev('DELETED', 'a')}\n`); }, 20);
    });
    const { events, closed } = collect(c, { resourceVersion: '7', labelSelector: 'app=x' });
    expect(await closed).toBeUndefined();
    expect(seenUrl).toBe('/api/v1/namespaces/ns1/pods?watch=true&resourceVersion=7&' +
      'labelSelector=app%3Dx');
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`))
      .toEqual(['ADDED a', 'MODIFIED a', 'DELETED a']);
  });

  it('calls onClose once, without an error, when the server ends the stream', async () => {
    let calls = 0;
    const c = await serve((_u, res) => { res.writeHead(200); res.end(); });
    await new Promise<void>((resolve) => {
      c.watch(PODS, {}, { onEvent: () => {}, onClose: (err) => {
        calls++;
        expect(err).toBeUndefined();
        setTimeout(resolve, 30);
      } });
    });
    expect(calls).toBe(1);
  });

  it('reports a non-200 answer (410 Expired) through onClose as KDP_GONE', async () => {
    const c = await serve((_u, res) => {
      res.writeHead(410, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410,
        reason: 'Expired', message: 'too old resource version: 1 (50)' }));
    });
    const err = (await collect(c, { resourceVersion: '1' }).closed) as KdpError;
    expect(err.code).toBe('KDP_GONE');
    expect(err.message).toBe('too old resource version: 1 (50)');
  });

  it('stop() ends the stream and onClose is not called', async () => {
    let first!: () => void;
    const gotFirst = new Promise<void>((r) => (first = r));
    const c = await serve((_u, res) => {
      res.writeHead(200);
      res.write(`${ev('ADDED', 'a')}\n`);
    });
    let closedCalls = 0;
    const events: WatchEvent[] = [];
    const h = c.watch(PODS, {}, { onEvent: (e) => { events.push(e); first(); },
      onClose: () => closedCalls++ });
    await gotFirst;
    h.stop();
    h.stop();
    await new Promise((r) => setTimeout(r, 50));
    expect(events).toHaveLength(1);
    expect(closedCalls).toBe(0);
  });

  it('a refused connection closes the watch with KDP_UNAVAILABLE', async () => {
    const c = await serve(() => {});
    const port = (server!.address() as AddressInfo).port;
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    const other = buildHttpClient({ server: `http://127.0.0.1:${port}` });
    const err = (await collect(other).closed) as KdpError;
    other.close();
    c.close();
    expect(err.code).toBe('KDP_UNAVAILABLE');
  });
});
