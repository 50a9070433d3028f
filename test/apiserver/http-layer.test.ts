// The HTTP layer over TLS, with raw sockets (node:tls): requests Node's parser refuses, slow
// requests and idle connections are answered with a Kubernetes Status (codes as Go's net/http
// under kube-apiserver) and the connection is closed; refused requests store nothing; a watch
// outlives the request timeout, which bounds receiving a request only.
import { mkdtemp, rm } from 'node:fs/promises';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAuthenticator } from '../../src/apiserver/authn/index.js';
import { DEFAULT_HTTP_LIMITS, resolveApiServerOptions } from '../../src/apiserver/options.js';
import { issueCa, issueLeaf } from '../../src/apiserver/pki/index.js';
import { listenApiServer } from '../../src/apiserver/serve.js';
import type { ListeningServer } from '../../src/apiserver/serve.js';
import { startApiServer } from '../../src/apiserver/start.js';
import { isKdpError } from '../../src/errors.js';
import { buildMemoryStore } from '../../src/store/index.js';
import type { StoreBackend } from '../../src/store/types.js';

interface Exchange {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** The server closed the connection before `waitMs`. */
  closed: boolean;
  elapsedMs: number;
  raw: string;
}

const LIMITS = { headersTimeoutMs: 400, requestTimeoutMs: 800, keepAliveTimeoutMs: 1000,
  maxHeaderBytes: 8192, bodyLimit: 64 * 1024 };

let srv: ListeningServer;
let store: StoreBackend;
let caPem: string;

/** Sends `parts` (`gapMs` apart) on a new TLS connection; reads until close or `waitMs`. */
function exchange(parts: readonly (string | Buffer)[], waitMs = 3000, gapMs = 0,
  to: { port: number; caPem: string } = { port: srv.port, caPem }): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const chunks: Buffer[] = [];
    let closed = false;
    const s = connect({ host: '127.0.0.1', port: to.port, ca: to.caPem,
      servername: 'localhost' }, async () => {
        for (const p of parts) {
          if (s.destroyed) return;
          s.write(p);
          if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
        }
      });
    const done = () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = raw.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      let body: unknown;
      try { body = JSON.parse(rest.join('\r\n\r\n')); } catch { body = rest.join('\r\n\r\n'); }
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, body, closed,
        elapsedMs: Date.now() - t0, raw });
    };
    const timer = setTimeout(() => { s.destroy(); done(); }, waitMs);
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('close', () => { closed = true; done(); });
    s.on('error', (e) => { if (!chunks.length) reject(e); });
  });
}

const get = (path: string, extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${extra}Connection: close\r\n\r\n`;

async function revision(): Promise<string> {
  const r = await exchange([get('/api/v1/namespaces/default/configmaps')]);
  return r.body.metadata.resourceVersion;
}

/** The Status an HTTP-layer refusal answers with, and the connection is closed. */
function expectRefusal(r: Exchange, code: number, reason: string | undefined,
  message: string | RegExp) {
  expect(r.status).toBe(code);
  expect(r.headers['content-type']).toBe('application/json');
  expect(r.headers.connection).toBe('close');
  expect(r.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', metadata: {},
    status: 'Failure', code });
  expect(r.body.reason).toBe(reason);
  if (typeof message === 'string') expect(r.body.message).toBe(message);
  else expect(r.body.message).toMatch(message);
  expect(r.closed).toBe(true);
}

beforeAll(async () => {
  const ca = await issueCa('http-layer-ca');
  caPem = ca.certPem;
  const cert = await issueLeaf(ca, { commonName: 'kdp', usage: 'server',
    sans: ['IP:127.0.0.1', 'DNS:localhost'] });
  store = buildMemoryStore();
  srv = await listenApiServer({ store, ...LIMITS, anonymous: true,
    authenticator: buildAuthenticator({ clientCertificates: true }) },
  { port: 0, tls: { certPem: cert.certPem, keyPem: cert.keyPem, caPem: ca.certPem } });
  const body = JSON.stringify({ metadata: { name: 'default' } });
  await exchange([`POST /api/v1/namespaces HTTP/1.1\r\nHost: localhost\r\nContent-Type: ` +
    `application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`]);
});
afterAll(async () => { await srv?.close(); await store?.close(); });

describe('requests the HTTP parser refuses are answered with a Status', () => {
  it('a plain request on the same server works (control)', async () => {
    const r = await exchange([get('/version')]);
    expect(r.status).toBe(200);
    expect(r.body.major).toBe('1');
  });

  it('headers over the limit: 431', async () => {
    const r = await exchange([get('/version', `X-Big: ${'a'.repeat(10_000)}\r\n`)]);
    expectRefusal(r, 431, undefined, 'Request Header Fields Too Large');
  });

  it('a 431 reaches a client still writing its headers that reads late (no reset)', async () => {
    // The client sends 4 MiB of header and reads only after 300 ms: a server that closes with
    // the rest unread sends a reset, which discards the answer waiting in the client's buffer.
    const got = await new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      const s = connect({ host: '127.0.0.1', port: srv.port, ca: caPem, servername: 'localhost' },
        () => {
          s.pause();
          s.write(`GET /version HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(4 << 20)}\r\n\r\n`);
          setTimeout(() => s.resume(), 300);
        });
      s.on('data', (d: Buffer) => chunks.push(d));
      s.on('error', () => {});
      s.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    expect(got.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
  });

  it('a Content-Length that is not a number: 400', async () => {
    const r = await exchange(['POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n' +
      'Host: localhost\r\nContent-Length: abc\r\n\r\n{}']);
    expectRefusal(r, 400, 'BadRequest', /^Bad Request: bad Content-Length/);
  });

  it('two different Content-Lengths: 400', async () => {
    const r = await exchange(['POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n' +
      'Host: localhost\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}']);
    expectRefusal(r, 400, 'BadRequest', /^Bad Request: bad Content-Length/);
  });

  it('Content-Length beside Transfer-Encoding (request smuggling): 400', async () => {
    const r = await exchange(['POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n' +
      'Host: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n']);
    expectRefusal(r, 400, 'BadRequest', /Content-Length/);
  });

  it('a transfer coding other than chunked: 501, as Go', async () => {
    const r = await exchange(['POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n' +
      'Host: localhost\r\nTransfer-Encoding: gzip\r\n\r\n']);
    expectRefusal(r, 501, undefined, 'Unsupported transfer encoding');
  });

  it('a malformed request line: 400', async () => {
    expectRefusal(await exchange(['GARBAGE\r\n\r\n']), 400, 'BadRequest',
      'Bad Request: malformed HTTP request');
    expectRefusal(await exchange(['G@T /version HTTP/1.1\r\nHost: x\r\n\r\n']), 400,
      'BadRequest', 'Bad Request: malformed HTTP request');
  });

  it('a bad header name: 400', async () => {
    const r = await exchange(['GET /version HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n']);
    expectRefusal(r, 400, 'BadRequest', /^Bad Request: /);
  });

  it('an HTTP/1.1 request without Host: 400, as Go', async () => {
    const r = await exchange(['GET /version HTTP/1.1\r\n\r\n']);
    expectRefusal(r, 400, 'BadRequest', 'Bad Request: missing required Host header');
  });

  it('an Expect other than 100-continue: 417, as Go', async () => {
    const r = await exchange([get('/version', 'Expect: teleport\r\n')]);
    expectRefusal(r, 417, undefined, /^Expectation Failed/);
  });
});

describe('unknown methods are answered 405 where the path is served, as go-restful', () => {
  const NOT_ALLOWED = 'the server does not allow this method on the requested resource';

  it('a method Node does not know (FOO) on a resource path: 405', async () => {
    const r = await exchange(['FOO /api/v1/namespaces/default/configmaps HTTP/1.1\r\n' +
      'Host: localhost\r\n\r\n']);
    expectRefusal(r, 405, 'MethodNotAllowed', NOT_ALLOWED);
  });

  it('PROPFIND on a resource path and POST on /version: 405; on an unknown path: 404',
    async () => {
      const a = await exchange([`PROPFIND /api/v1/namespaces/default/configmaps HTTP/1.1\r\n` +
        'Host: localhost\r\nConnection: close\r\n\r\n']);
      expect(a.status).toBe(405);
      expect(a.body).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405,
        message: NOT_ALLOWED });
      const b = await exchange(['POST /version HTTP/1.1\r\nHost: localhost\r\n' +
        'Content-Length: 0\r\nConnection: close\r\n\r\n']);
      expect(b.body).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
      for (const path of ['/nowhere', '/apis/example.com/v1/things']) {
        const c = await exchange([`PROPFIND ${path} HTTP/1.1\r\nHost: localhost\r\n` +
          'Connection: close\r\n\r\n']);
        expect(c.body).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
      }
    });

  it('CONNECT: 405 and the connection is closed', async () => {
    const r = await exchange(['CONNECT /api/v1/namespaces HTTP/1.1\r\nHost: localhost\r\n\r\n']);
    expectRefusal(r, 405, 'MethodNotAllowed', NOT_ALLOWED);
  });
});

describe('bodies over the limit: 413 on both lanes, and nothing is stored', () => {
  it('a create declaring a body over the limit (fast lane)', async () => {
    const before = await revision();
    const r = await exchange(['POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n' +
      'Host: localhost\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\n\r\n{']);
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
    expect(await revision()).toBe(before);
  });

  it('a body over the limit on the Fastify path closes the connection after the 413',
    async () => {
      const r = await exchange(['POST /api/v1/namespaces/default/configmaps/a/b/c HTTP/1.1\r\n' +
        'Host: localhost\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\n\r\n{']);
      expect(r.status).toBe(413);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge',
        code: 413 });
      expect(r.headers.connection).toBe('close');
      expect(r.closed).toBe(true);
    });
});

describe('slow requests are cut off; responses are not', () => {
  it('headers not received in time: 408 after headersTimeoutMs', async () => {
    const r = await exchange(['GET /version HTTP/1.1\r\n', 'Host: localhost\r\n'], 4000, 100);
    expectRefusal(r, 408, 'Timeout', 'request headers were not received in time');
    expect(r.elapsedMs).toBeGreaterThanOrEqual(LIMITS.headersTimeoutMs - 50);
    expect(r.elapsedMs).toBeLessThan(2500);
  });

  it('a connection that sends nothing is closed after headersTimeoutMs', async () => {
    const r = await exchange([], 4000);
    expect(r.closed).toBe(true);
    expect(r.elapsedMs).toBeLessThan(2500);
  });

  it('a TCP connection that never starts TLS is closed after headersTimeoutMs', async () => {
    const t0 = Date.now();
    const sock = netConnect(srv.port, '127.0.0.1');
    sock.on('error', () => {});
    const closedAfter = await new Promise<number>((resolve) => {
      const timer = setTimeout(() => { sock.destroy(); resolve(Infinity); }, 4000);
      sock.on('close', () => { clearTimeout(timer); resolve(Date.now() - t0); });
    });
    expect(closedAfter).toBeGreaterThanOrEqual(LIMITS.headersTimeoutMs - 50);
    expect(closedAfter).toBeLessThan(2500);
  });

  it('plain HTTP sent to the TLS port is closed at once (no HTTP answer before TLS)',
    async () => {
      const t0 = Date.now();
      const sock = netConnect(srv.port, '127.0.0.1', () => sock.write(get('/version')));
      sock.on('error', () => {});
      const closedAfter = await new Promise<number>((resolve) => {
        const timer = setTimeout(() => { sock.destroy(); resolve(Infinity); }, 4000);
        sock.on('close', () => { clearTimeout(timer); resolve(Date.now() - t0); });
      });
      expect(closedAfter).toBeLessThan(LIMITS.headersTimeoutMs);
    });

  it('a create whose body stalls: 504 Timeout as upstream, and nothing is stored', async () => {
    const before = await revision();
    const body = JSON.stringify({ metadata: { name: 'slow' }, data: { a: '1' } });
    const r = await exchange(['POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n' +
      `Host: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}` +
      `\r\n\r\n${body.slice(0, 10)}`], 4000);
    expectRefusal(r, 504, 'Timeout',
      'Timeout: request did not complete within the allotted timeout');
    expect(r.elapsedMs).toBeGreaterThanOrEqual(LIMITS.requestTimeoutMs - 50);
    expect(await revision()).toBe(before);
    const g = await exchange([get('/api/v1/namespaces/default/configmaps/slow')]);
    expect(g.status).toBe(404);
  });

  it('a body that stalls on the Fastify path: 504 too', async () => {
    const r = await exchange(['POST /api/v1/namespaces/default/configmaps/a/b/c HTTP/1.1\r\n' +
      'Host: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{'], 4000);
    expectRefusal(r, 504, 'Timeout',
      'Timeout: request did not complete within the allotted timeout');
  });

  it('a watch keeps streaming past the request timeout', async () => {
    const events: string[] = [];
    const s = connect({ host: '127.0.0.1', port: srv.port, ca: caPem, servername: 'localhost' });
    s.on('data', (d: Buffer) => events.push(d.toString('utf8')));
    s.write(get('/api/v1/namespaces/default/configmaps?watch=true'));
    await new Promise((r) => setTimeout(r, 2 * LIMITS.requestTimeoutMs));
    expect(s.destroyed).toBe(false);
    const body = JSON.stringify({ metadata: { name: 'late' } });
    const c = await exchange(['POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n' +
      `Host: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
      `Connection: close\r\n\r\n${body}`]);
    expect(c.status).toBe(201);
    await new Promise((r) => setTimeout(r, 200));
    s.destroy();
    const text = events.join('');
    expect(text).toMatch(/^HTTP\/1.1 200/);
    expect(text).toContain('"type":"ADDED"');
    expect(text).toContain('"name":"late"');
  });

  it('an idle keep-alive connection is closed after keepAliveTimeoutMs', async () => {
    const r = await exchange(['GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n'], 4000);
    expect(r.status).toBe(200);
    expect(r.headers['keep-alive']).toBe(`timeout=${LIMITS.keepAliveTimeoutMs / 1000}`);
    expect(r.closed).toBe(true);
    expect(r.elapsedMs).toBeGreaterThanOrEqual(LIMITS.keepAliveTimeoutMs - 50);
    expect(r.elapsedMs).toBeLessThan(2500);
  });
});

describe('HTTP limits are options with upstream defaults', () => {
  const store0 = buildMemoryStore();

  it('kdp apiserver\'s start passes its limits to the server', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kdp-http-limits-'));
    const api = await startApiServer({ dataDir: join(dir, 'data'), port: 0,
      httpLimits: { headersTimeoutMs: 300, requestTimeoutMs: 600 } });
    try {
      const r = await exchange(['GET /version HTTP/1.1\r\n'], 4000, 0,
        { port: api.port, caPem: api.pki.caCertPem });
      expectRefusal(r, 408, 'Timeout', 'request headers were not received in time');
      expect(r.elapsedMs).toBeLessThan(2000);
    } finally {
      await api.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('defaults: 32 s for headers, 60 s for a request, 90 s idle, 1 MiB of headers', () => {
    const o = resolveApiServerOptions({ store: store0 });
    expect(DEFAULT_HTTP_LIMITS).toEqual({ headersTimeoutMs: 32_000, requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 90_000, maxHeaderBytes: 1024 * 1024 });
    expect(o).toMatchObject(DEFAULT_HTTP_LIMITS);
  });

  it('a header timeout longer than the request timeout, or a non-integer, is KDP_CONFIG', () => {
    for (const bad of [{ headersTimeoutMs: 2000, requestTimeoutMs: 1000 },
      { requestTimeoutMs: 0 }, { keepAliveTimeoutMs: 1.5 }, { maxHeaderBytes: -1 }]) {
      let err: unknown;
      try { resolveApiServerOptions({ store: store0, ...bad }); } catch (e) { err = e; }
      expect(isKdpError(err, 'KDP_CONFIG')).toBe(true);
    }
  });
});
