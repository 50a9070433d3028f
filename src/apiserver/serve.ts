// Listening: HTTPS with the cluster PKI by default (client certificates requested, verified
// against the CA, never required), plain HTTP only when asked. Binds 127.0.0.1 unless told.

import { createServer as createHttp } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { kdpError } from '../errors.js';
import type { ApiServerOptions, ResolvedApiServerOptions } from './options.js';
import { resolveApiServerOptions } from './options.js';
import { buildApiServer } from './app.js';
import type { ApiServer } from './app.js';
import { refuseConnect, refuseExpectation } from './http-refusals.js';

export interface TlsMaterial {
  readonly certPem: string;
  readonly keyPem: string;
  /** CA used to verify client certificates. */
  readonly caPem?: string;
}

export interface ListenOptions {
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Required unless `insecureHttp`. */
  readonly tls?: TlsMaterial;
  readonly insecureHttp?: boolean;
}

export interface ListeningServer extends ApiServer {
  readonly url: string;
  readonly port: number;
}

/** Node's limits on receiving requests (`requestTimeout` ends when the request has been read,
 *  so watches and long responses are not cut); the Host check is app.ts's (a Status body). */
function httpLimits(o: ResolvedApiServerOptions) {
  return {
    headersTimeout: o.headersTimeoutMs,
    requestTimeout: o.requestTimeoutMs,
    keepAliveTimeout: o.keepAliveTimeoutMs,
    maxHeaderSize: o.maxHeaderBytes,
    // Node looks for expired requests at this interval (default 30 s, too coarse for 32 s).
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(o.headersTimeoutMs / 4))),
    requireHostHeader: false,
  };
}

/** Builds the app on a server of our own (so TLS options stay ours) and listens. */
export async function listenApiServer(opts: ApiServerOptions, l: ListenOptions):
  Promise<ListeningServer> {
  const host = l.host ?? '127.0.0.1';
  if (!l.insecureHttp && !l.tls) throw kdpError('KDP_CONFIG', 'apiserver: TLS material required');
  const o = resolveApiServerOptions(opts);
  let srv: Server | undefined;
  // Every TCP connection, whatever became of it: Node's closeAllConnections knows only HTTP
  // connections, so a TLS handshake in progress or an upgraded stream (exec, port-forward, a
  // proxied upgrade) would hold close() open until it ended on its own.
  const sockets = new Set<Socket>();
  const serverFactory = (handler: Parameters<typeof createHttp>[1]) => {
    // Client certificates are requested, not required, and verified by authentication (app.ts):
    // a certificate that fails is a 401 there, as upstream's tls.RequestClientCert.
    srv = l.insecureHttp ? createHttp(httpLimits(o), handler) :
      createHttps({ cert: l.tls!.certPem, key: l.tls!.keyPem, ca: l.tls!.caPem,
        requestCert: !!l.tls!.caPem, rejectUnauthorized: false, ...httpLimits(o),
        // Go bounds the TLS handshake by the read timeouts too (tlsHandshakeTimeout).
        handshakeTimeout: o.headersTimeoutMs }, handler);
    srv.on('connect', refuseConnect);
    srv.on('checkExpectation', refuseExpectation);
    srv.on('connection', (sock: Socket) => {
      sockets.add(sock);
      sock.once('close', () => sockets.delete(sock));
    });
    return srv;
  };
  const built = buildApiServer({ ...o, serverFactory });
  try {
    await built.app.listen({ host, port: l.port });
  } catch (e) {
    await built.app.close().catch(() => undefined);
    throw listenError(e, host, l.port);
  }
  const port = (built.app.server.address() as AddressInfo).port;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const url = `${l.insecureHttp ? 'http' : 'https'}://${hostPart}:${port}`;
  void srv;
  return { ...built, url, port,
    async close() {
      const closing = built.close();
      for (const sock of sockets) sock.destroy();
      await closing;
    } };
}

/** A listen failure as the user can act on it: which address, why, and the flag that moves it. */
function listenError(e: unknown, host: string, port: number): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const why = code === 'EADDRINUSE' ? 'the address is already in use (another cluster or program holds it)' :
    code === 'EACCES' ? 'permission denied (ports below 1024 need root)' :
    code === 'EADDRNOTAVAIL' ? 'no interface here has that address' : undefined;
  if (!why) return e;
  return kdpError('KDP_CONFIG', `API server cannot listen on ${where}: ${why}; ` +
    'choose another port with --port (0: any free port)');
}
