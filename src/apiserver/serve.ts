// Listening: HTTPS with the cluster PKI by default (client certificates requested, verified
// against the CA, never required), plain HTTP only when asked. Binds 127.0.0.1 unless told.

import { createServer as createHttp } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { kdpError } from '../errors.js';
import type { ApiServerOptions } from './options.js';
import { buildApiServer } from './app.js';
import type { ApiServer } from './app.js';

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

/** Builds the app on a server of our own (so TLS options stay ours) and listens. */
export async function listenApiServer(opts: ApiServerOptions, l: ListenOptions):
  Promise<ListeningServer> {
  const host = l.host ?? '127.0.0.1';
  if (!l.insecureHttp && !l.tls) throw kdpError('KDP_CONFIG', 'apiserver: TLS material required');
  let srv: Server | undefined;
  const serverFactory = (handler: Parameters<typeof createHttp>[1]) => {
    srv = l.insecureHttp ? createHttp(handler) :
      createHttps({ cert: l.tls!.certPem, key: l.tls!.keyPem, ca: l.tls!.caPem,
        requestCert: !!l.tls!.caPem, rejectUnauthorized: false }, handler);
    srv.keepAliveTimeout = 65_000;
    srv.requestTimeout = 0;
    return srv;
  };
  const built = buildApiServer({ ...opts, serverFactory });
  await built.app.listen({ host, port: l.port });
  const port = (built.app.server.address() as AddressInfo).port;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const url = `${l.insecureHttp ? 'http' : 'https'}://${hostPart}:${port}`;
  void srv;
  return { ...built, url, port };
}
