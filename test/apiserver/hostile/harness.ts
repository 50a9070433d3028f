// The hostile-request harness: a kdp API server started as `kdp apiserver` starts it (HTTPS,
// the cluster PKI, the static token file) on a random 127.0.0.1 port, and a client that sends
// raw requests over one keep-alive TLS connection, so every request takes the production path
// (the fast lane for JSON resource requests, Fastify for the rest), never inject().
//
// Identities: `admin` (system:masters), `nobody` (a token user with no RBAC rights at all),
// `cm-reader` (may read ConfigMaps in one namespace, once the fixtures bind it),
// `anonymous` (no credentials) and `badtoken` (a bearer token that matches nobody).
//
// The store revision is read through the API only: the resourceVersion of a list read from the
// store (upstream: the etcd revision at the read, which kdp's MVCC store also answers).

import type { IncomingMessage } from 'node:http';
import { Agent, request } from 'node:https';
import { connect } from 'node:tls';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer } from '../../../src/apiserver/start.js';
import type { RunningApiServer } from '../../../src/apiserver/start.js';

export type Identity = 'admin' | 'nobody' | 'cm-reader' | 'anonymous' | 'badtoken';

export const NOBODY_TOKEN = 'hostile-nobody-token-0123456789';
export const NOBODY_USER = 'hostile-nobody';
/** Given get/list on ConfigMaps in namespace `hostile` by the fixtures, nothing else. */
export const CM_READER_TOKEN = 'hostile-cm-reader-token-0123456789';
export const CM_READER_USER = 'hostile-cm-reader';

export interface SendOptions {
  /** A string or Buffer is sent as is; anything else as JSON. */
  readonly body?: unknown;
  /** Content-Type; default application/json when there is a body. */
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly as?: Identity;
  /** A watch: a 2xx answer resolves at its headers (the stream is then closed). */
  readonly streaming?: boolean;
}

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  /** The parsed JSON body, or undefined. */
  readonly body: any;
}

/** A request written byte for byte on a fresh TLS connection (for HTTP-layer refusals). */
export interface RawRequest {
  /** `GET /path HTTP/1.1` */
  readonly line: string;
  /** Header lines besides Host, Authorization (the admin's) and `Connection: close`. */
  readonly headers?: readonly string[];
  readonly body?: string;
}

export interface HostileServer {
  readonly server: RunningApiServer;
  send(method: string, path: string, opts?: SendOptions): Promise<Reply>;
  sendRaw(req: RawRequest): Promise<Reply>;
  /** The store's current revision, as a list read from the store reports it. */
  revision(): Promise<number>;
  /** Sends as admin and fails unless the status is 2xx; returns the parsed body. */
  must(method: string, path: string, opts?: SendOptions): Promise<any>;
  close(): Promise<void>;
}

/** A value sent as raw JSON text (e.g. `1e400`, which JSON.stringify cannot produce). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of `v`, with every RawJson spliced in as its raw text. */
export function toJson(v: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(v, (_k, x: unknown) => {
    if (x instanceof RawJson) { raws.push(x.text); return `\u0000RAW${raws.length - 1}\u0000`; }
    return x;
  });
  return text.replace(/"\\u0000RAW(\d+)\\u0000"/g, (_m, i: string) => raws[Number(i)]!);
}

function encodeBody(body: unknown): string | Buffer | undefined {
  if (body === undefined) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  return toJson(body);
}

/** Status line, headers and body of an HTTP/1.1 answer read to the end of the connection. */
function parseRawReply(text: string): Reply {
  const end = text.indexOf('\r\n\r\n');
  const head = end < 0 ? text : text.slice(0, end);
  let body = end < 0 ? '' : text.slice(end + 4);
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
  let parsed: unknown;
  try { parsed = JSON.parse(body); } catch { parsed = undefined; }
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
  return { status, headers, text: body || statusLine || '(connection closed, no answer)',
    body: parsed };
}

function dechunk(s: string): string {
  let out = '';
  for (let i = 0; ;) {
    const eol = s.indexOf('\r\n', i);
    const size = parseInt(s.slice(i, eol), 16);
    if (!(size > 0)) return out;
    out += s.slice(eol + 2, eol + 2 + size);
    i = eol + 2 + size + 2;
  }
}

export async function startHostileServer(): Promise<HostileServer> {
  const dir = await mkdtemp(join(tmpdir(), 'kdp-hostile-'));
  const dataDir = join(dir, 'data');
  // The token file is the PKI's own (`<data>/pki/tokens.csv`); ensurePki adds the admin line.
  await mkdir(join(dataDir, 'pki'), { recursive: true, mode: 0o700 });
  await writeFile(join(dataDir, 'pki', 'tokens.csv'),
    `${NOBODY_TOKEN},${NOBODY_USER},${NOBODY_USER},"hostile:nobodies"\n` +
    `${CM_READER_TOKEN},${CM_READER_USER},${CM_READER_USER},"hostile:readers"\n`, { mode: 0o600 });
  let server: RunningApiServer;
  try {
    server = await startApiServer({ dataDir, port: 0 });
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: server.pki.caCertPem });
  const tokens: Record<Identity, string | undefined> = {
    admin: server.pki.adminToken, nobody: NOBODY_TOKEN, 'cm-reader': CM_READER_TOKEN,
    anonymous: undefined,
    badtoken: 'no-such-token-at-all',
  };

  const send: HostileServer['send'] = (method, path, opts = {}) => {
    const payload = encodeBody(opts.body);
    const headers: Record<string, string | number> = { ...opts.headers };
    const token = tokens[opts.as ?? 'admin'];
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (payload !== undefined) {
      headers['content-type'] ??= opts.contentType ?? 'application/json';
      headers['content-length'] ??= Buffer.byteLength(payload);
    }
    return new Promise((resolve, reject) => {
      const onResponse = (res: IncomingMessage) => {
        if (opts.streaming && res.statusCode! < 300) {
          resolve({ status: res.statusCode!, headers: res.headers, text: '', body: undefined });
          res.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try { body = JSON.parse(text); } catch { body = undefined; }
          resolve({ status: res.statusCode!, headers: res.headers, text, body });
        });
        res.on('error', reject);
      };
      // Options, not a URL string: Node parses a URL string with WHATWG URL, which would resolve
      // `..` and `%2E%2E` segments before they are sent, and the traversal cases need them sent.
      const req = request({ host: '127.0.0.1', port: server.port, path, method, headers, agent },
        onResponse);
      req.setTimeout(20_000, () => req.destroy(new Error(`${method} ${path}: no answer in 20 s`)));
      req.on('error', reject);
      req.end(payload);
    });
  };

  const sendRaw: HostileServer['sendRaw'] = (raw) => new Promise((resolve, reject) => {
    const head = [raw.line, `Host: 127.0.0.1:${server.port}`,
      `Authorization: Bearer ${server.pki.adminToken}`, 'Connection: close',
      ...(raw.headers ?? []), '', ''].join('\r\n');
    const socket = connect({ host: '127.0.0.1', port: server.port, ca: server.pki.caCertPem,
      servername: 'localhost' }, () => socket.end(head + (raw.body ?? '')));
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error(`${raw.line}: no answer in 10 s`)));
    const reply = () => parseRawReply(Buffer.concat(chunks).toString('latin1'));
    socket.on('data', (d: Buffer) => chunks.push(d));
    // A server that answers before reading everything may reset the connection under our write.
    socket.on('error', (e) => chunks.length ? resolve(reply()) : reject(e));
    socket.on('close', () => resolve(reply()));
  });

  const must: HostileServer['must'] = async (method, path, opts) => {
    const r = await send(method, path, opts);
    if (r.status < 200 || r.status > 299) {
      throw new Error(`set-up ${method} ${path} answered ${r.status}: ${r.text.slice(0, 500)}`);
    }
    return r.body;
  };

  return {
    server, send, sendRaw, must,
    async revision() {
      const l = await must('GET', '/api/v1/namespaces?limit=1');
      const rv = Number(l?.metadata?.resourceVersion);
      if (!Number.isInteger(rv) || rv <= 0) throw new Error(`list has no revision: ${l}`);
      return rv;
    },
    async close() {
      agent.destroy();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
