// The byte path of the proxy subresources: one HTTP request to the resolved location over a
// connection the BackendDialer made, the answer streamed back as it comes. As upstream's
// UpgradeAwareHandler: hop-by-hop headers and the caller's Authorization stay behind, a request
// for `…/proxy` without a trailing slash is redirected to `…/proxy/`, and a failed dial or
// exchange is a 503 `error trying to reach service: …` Status.

import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { kdpError } from '../../errors.js';
import type { BackendDialer } from './backend-dialer.js';
import { connectKubelet, KUBELET_TLS_VERIFY, type KubeletClientTls } from './kubelet-tls.js';
import type { ProxyLocation } from './locations.js';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization',
  'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'authorization']);

/** Go's wording of a dial error (`dial tcp 10.244.0.5:81: connect: connection refused`); a
 *  kubelet certificate's refusal is already in Go's words (kubelet-tls.ts). */
export function dialError(loc: { ip: string; port: number }, e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (err.code === KUBELET_TLS_VERIFY) return err.message;
  const host = loc.ip.includes(':') ? `[${loc.ip}]:${loc.port}` : `${loc.ip}:${loc.port}`;
  const why: Record<string, string> = {
    ECONNREFUSED: 'connect: connection refused', EHOSTUNREACH: 'connect: no route to host',
    ENETUNREACH: 'connect: network is unreachable', ETIMEDOUT: 'i/o timeout',
  };
  return `dial tcp ${host}: ${(err.code && why[err.code]) ?? err.message}`;
}

function unreachable(msg: string) {
  return kdpError('KDP_UNAVAILABLE', `error trying to reach service: ${msg}`);
}

/** A client certificate and the CA that signs the backend's serving certificate. */
export type ClientTls = KubeletClientTls;

export interface ProxyCall {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The request body as the API server read it (undefined for none). */
  readonly body?: Buffer;
  /** Path after `/proxy` (with its leading slash, may be ''), and the raw query (`a=b`). */
  readonly path: string;
  readonly query: string;
  readonly loc: ProxyLocation;
  readonly dialer: BackendDialer;
  readonly timeoutMs?: number;
  /** https with this client identity, the backend checked against `caPem` (nodes/proxy to a kubelet). */
  readonly tls?: ClientTls;
}

/**
 * Resolves once the answer has been handed on (or the redirect sent). Rejects with a kdpError,
 * before anything was written, when the backend could not be reached.
 */
export async function proxyHttp(c: ProxyCall): Promise<void> {
  const url = c.req.url ?? '';
  if (c.path === '' && !url.split('?')[0]!.endsWith('/')) {
    const [p, q] = url.split('?');
    c.res.writeHead(301, { Location: `${p}/${q !== undefined ? `?${q}` : ''}` });
    c.res.end();
    return;
  }
  const port = c.loc.port ?? (c.loc.scheme === 'https' ? 443 : 80);
  let raw: Duplex;
  try {
    raw = await c.dialer.dial({ node: c.loc.node, ip: c.loc.ip, port,
      kubelet: (c.loc as { kubelet?: boolean }).kubelet });
  } catch (e) {
    throw unreachable(dialError({ ip: c.loc.ip, port }, e));
  }
  const socket: Duplex = c.loc.scheme === 'https'
    // As upstream's proxy transport for pods and services, the backend's certificate is not
    // checked; a kubelet's (c.tls) is, against the cluster CA and the Node's address (kubelet-tls.ts).
    ? connectKubelet(raw as Socket, c.loc.ip, c.tls) : raw;
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(c.req.headers)) {
    if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
  }
  const host = c.loc.ip.includes(':') ? `[${c.loc.ip}]` : c.loc.ip;
  headers.host = c.loc.port ? `${host}:${c.loc.port}` : host;
  const client = c.req.socket.remoteAddress;
  if (client) headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${headers['x-forwarded-for']}, ${client}` : client;
  if (c.body?.length) headers['content-length'] = String(c.body.length);
  else delete headers['content-length'];
  await new Promise<void>((resolve, reject) => {
    let answered = false;
    const out = request({
      method: c.req.method, path: `${c.path || '/'}${c.query ? `?${c.query}` : ''}`, headers,
      createConnection: () => socket as Socket, timeout: c.timeoutMs ?? 30_000,
    }, (upstream) => {
      answered = true;
      const back: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(upstream.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) back[k] = v;
      c.res.writeHead(upstream.statusCode ?? 502, back);
      upstream.pipe(c.res);
      upstream.once('end', resolve);
      upstream.once('error', () => { c.res.destroy(); resolve(); });
      c.res.once('close', () => { upstream.destroy(); resolve(); });
    });
    out.once('timeout', () => out.destroy(Object.assign(new Error('i/o timeout'), { code: 'ETIMEDOUT' })));
    out.once('error', (e) => {
      socket.destroy();
      if (answered) resolve();
      else reject(unreachable(dialError({ ip: c.loc.ip, port }, e)));
    });
    out.end(c.body?.length ? c.body : undefined);
  });
}
