// One keep-alive connection pool to one API server, with the TLS and credentials of a
// kubeconfig. Credentials travel only over https, as client-go (`only try to read the auth
// information if we are secure`).

import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isKdpError, kdpError } from '../errors.js';
import { transportError } from './http-errors.js';

export interface TransportOptions {
  /** `https://127.0.0.1:6443` (a path prefix is kept). */
  readonly server: string;
  readonly caPem?: string;
  readonly token?: string;
  readonly certPem?: string;
  readonly keyPem?: string;
  readonly insecureSkipVerify?: boolean;
  readonly userAgent?: string;
  /** For non-streaming requests; default 60 s. */
  readonly timeoutMs?: number;
}

export interface Body {
  readonly contentType: string;
  readonly data: string;
}

export interface Transport {
  /** A complete request; resolves with status and body text (never rejects on HTTP status). */
  call(method: string, path: string, body?: Body): Promise<{ status: number; text: string }>;
  /** A streaming GET: resolves with the response once headers arrive; `abort()` ends it. */
  stream(path: string): { response: Promise<IncomingMessage>; abort(): void };
  close(): void;
}

export function buildTransport(o: TransportOptions): Transport {
  let url: URL;
  try {
    url = new URL(o.server);
  } catch {
    throw kdpError('KDP_CONFIG', `API server URL ${JSON.stringify(o.server)} is not a URL`);
  }
  const secure = url.protocol === 'https:';
  if (!secure && url.protocol !== 'http:') {
    throw kdpError('KDP_CONFIG', `API server URL ${o.server} must be http:// or https://`);
  }
  const prefix = url.pathname.replace(/\/+$/, '');
  const agent = secure
    ? new HttpsAgent({ keepAlive: true, ca: o.caPem, cert: o.certPem, key: o.keyPem,
      rejectUnauthorized: !o.insecureSkipVerify })
    : new HttpAgent({ keepAlive: true });
  const headers: Record<string, string> = {
    accept: 'application/json', 'user-agent': o.userAgent ?? 'kdp/0.1.0',
    ...(secure && o.token ? { authorization: `Bearer ${o.token}` } : {}),
  };
  const send = secure ? httpsRequest : httpRequest;
  const timeoutMs = o.timeoutMs ?? 60_000;

  function open(method: string, path: string, body?: Body) {
    return send({
      protocol: url.protocol, hostname: url.hostname.replace(/^\[|\]$/g, ''), port: url.port,
      method, path: prefix + path, agent,
      headers: body ? { ...headers, 'content-type': body.contentType,
        'content-length': Buffer.byteLength(body.data) } : headers,
    });
  }

  return {
    call(method, path, body) {
      const attempt = (retried: boolean) => new Promise<{ status: number; text: string }>(
        (resolve, reject) => {
          const req = open(method, path, body);
          req.setTimeout(timeoutMs, () => req.destroy(kdpError('KDP_TIMEOUT',
            `${method} ${path}: no answer from ${o.server} within ${timeoutMs} ms`)));
          req.on('error', (e: NodeJS.ErrnoException) => {
            // A kept-alive socket the server closed while idle: send once more on a new one
            // (Node's documented `reusedSocket` pattern; client-go retries resets too).
            if (!retried && req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) {
              attempt(true).then(resolve, reject);
              return;
            }
            reject(isKdpError(e) ? e : transportError(o.server, e));
          });
          req.on('response', (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('error', (e) => reject(transportError(o.server, e)));
            res.on('end', () => resolve({ status: res.statusCode ?? 0,
              text: Buffer.concat(chunks).toString('utf8') }));
          });
          req.end(body?.data);
        });
      return attempt(false);
    },
    stream(path) {
      const req = open('GET', path);
      const response = new Promise<IncomingMessage>((resolve, reject) => {
        req.on('response', resolve);
        req.on('error', (e) => reject(transportError(o.server, e)));
      });
      req.end();
      return { response, abort: () => req.destroy() };
    },
    close: () => agent.destroy(),
  };
}
