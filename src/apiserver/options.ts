// Options of the API server, validated and defaulted once.

import type { ComponentStatusSource } from './rest/component-status.js';
import type { MetricsApiSource } from '../metrics/api.js';
import type { BackendDialer } from './proxy/backend-dialer.js';
import type { ServiceAccountTokenIssuer } from './authn/service-account.js';
import { randomUUID } from 'node:crypto';
import type { FastifyServerFactory } from 'fastify';
import { kdpError } from '../errors.js';
import type { StoreBackend } from '../store/types.js';
import type { AdmissionPlugin, Authenticator, Authorizer } from './pipeline-types.js';
import type { LogProvider } from './rest/deps.js';
import type { LogIngestSink } from './log-ingest-route.js';
import type { ResourceCatalog } from './resource-types.js';
import type { Validator } from './rules.js';
import type { UiServerOptions } from '../ui/server/ui-server.js';

export interface ApiServerOptions {
  readonly store: StoreBackend;
  /** Absent: every request is the admin user (`system:admin`, group `system:masters`). */
  readonly authenticator?: Authenticator;
  /** Requests without credentials run as system:anonymous (default true); else 401. */
  readonly anonymous?: boolean;
  /** Default AlwaysAllow. */
  readonly authorizer?: Authorizer;
  readonly admission?: readonly AdmissionPlugin[];
  /** Object validation (422 causes); default: the api package's `validate`. */
  readonly validator?: Validator;
  readonly catalog?: ResourceCatalog;
  readonly logProvider?: LogProvider;
  /** Signs service-account tokens (serviceaccounts/token); absent: that subresource is 404. */
  readonly serviceAccountTokens?: ServiceAccountTokenIssuer;
  /** What `kubectl get componentstatuses` shows; default: probes of 10259 and 10257. */
  readonly componentStatuses?: ComponentStatusSource;
  /** Serves metrics.k8s.io/v1beta1 (`kubectl top`) from this source; absent: not served. */
  readonly metricsApi?: MetricsApiSource;
  /** How `pods/proxy` and `services/proxy` reach pod addresses (default: virtual, none). */
  readonly backendDialer?: BackendDialer;
  /** The API server's client certificate at kubelets (exec, attach, port-forward). */
  readonly kubeletClient?: { readonly certPem: string; readonly keyPem: string; readonly caPem: string };
  /** Fastify server factory (serve.ts passes its HTTP/HTTPS server). */
  readonly serverFactory?: FastifyServerFactory;
  /** Request body limit in bytes (default 3 MiB, as upstream). */
  readonly bodyLimit?: number;
  /** Time to receive a request's line and headers, from its first byte (default 32 s, upstream's
   *  ReadHeaderTimeout); then 408 with a Status and the connection is closed. */
  readonly headersTimeoutMs?: number;
  /** Time to receive a whole request, headers and body (default 60 s, upstream's
   *  --request-timeout); then 504 Timeout as upstream's timeout filter. Sending the response
   *  (a watch, a log stream, a long list) is not bounded. */
  readonly requestTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this (default 90 s, upstream's IdleTimeout). */
  readonly keepAliveTimeoutMs?: number;
  /** Most bytes of a request line and headers (default 1 MiB, upstream's MaxHeaderBytes); 431
   *  past it. */
  readonly maxHeaderBytes?: number;
  /** Interval of watch bookmarks (default 60 s). */
  readonly bookmarkIntervalMs?: number;
  /** The web UI at `/ui/`: the data directory it reads rule history from, its sessions. */
  readonly ui?: UiServerOptions;
  /** Where node agents' shipped log records go (`POST /kdp/v1/nodes/{node}/logrecords`,
   *  log-ingest-route.ts), asked per request; absent or undefined: 503. */
  readonly logIngest?: () => LogIngestSink | undefined;
  /** Fastify/pino logging (default off). */
  readonly logger?: boolean;
  readonly now?: () => Date;
  readonly newUid?: () => string;
}

/** The HTTP server's bounds on receiving requests and on idle connections. */
export type HttpLimitOptions = Pick<ApiServerOptions, 'headersTimeoutMs' | 'requestTimeoutMs' |
  'keepAliveTimeoutMs' | 'maxHeaderBytes'>;

export interface ResolvedApiServerOptions extends ApiServerOptions {
  readonly anonymous: boolean;
  readonly bodyLimit: number;
  readonly bookmarkIntervalMs: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxHeaderBytes: number;
  readonly now: () => Date;
  readonly newUid: () => string;
}

export const DEFAULT_BODY_LIMIT = 3 * 1024 * 1024;
/** kube-apiserver's http.Server: ReadHeaderTimeout 32 s ("just shy of requestTimeoutUpperBound"),
 *  IdleTimeout 90 s (http.DefaultTransport's keep-alive), MaxHeaderBytes 1 MiB; --request-timeout
 *  60 s bounds non-long-running requests (here: receiving them; a slower body gets its 504). */
export const DEFAULT_HTTP_LIMITS = {
  headersTimeoutMs: 32_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 90_000,
  maxHeaderBytes: 1024 * 1024,
} as const;

export function resolveApiServerOptions(o: ApiServerOptions): ResolvedApiServerOptions {
  if (!o || !o.store) throw kdpError('KDP_CONFIG', 'apiserver: a store is required');
  const r = {
    ...o,
    anonymous: o.anonymous ?? true,
    bodyLimit: o.bodyLimit ?? DEFAULT_BODY_LIMIT,
    bookmarkIntervalMs: o.bookmarkIntervalMs ?? 60_000,
    headersTimeoutMs: o.headersTimeoutMs ?? DEFAULT_HTTP_LIMITS.headersTimeoutMs,
    requestTimeoutMs: o.requestTimeoutMs ?? DEFAULT_HTTP_LIMITS.requestTimeoutMs,
    keepAliveTimeoutMs: o.keepAliveTimeoutMs ?? DEFAULT_HTTP_LIMITS.keepAliveTimeoutMs,
    maxHeaderBytes: o.maxHeaderBytes ?? DEFAULT_HTTP_LIMITS.maxHeaderBytes,
    now: o.now ?? (() => new Date()),
    newUid: o.newUid ?? randomUUID,
  };
  for (const k of ['bodyLimit', 'bookmarkIntervalMs', 'headersTimeoutMs', 'requestTimeoutMs',
    'keepAliveTimeoutMs', 'maxHeaderBytes'] as const) {
    if (!Number.isInteger(r[k]) || r[k] < 1) {
      throw kdpError('KDP_CONFIG', `apiserver option ${k} must be a positive integer, got ${r[k]}`);
    }
  }
  // Node checks both from a request's first byte; headers are part of the request.
  if (r.headersTimeoutMs > r.requestTimeoutMs) {
    throw kdpError('KDP_CONFIG', `apiserver option headersTimeoutMs (${r.headersTimeoutMs}) ` +
      `must not exceed requestTimeoutMs (${r.requestTimeoutMs})`);
  }
  return r;
}
