// Options of the API server, validated and defaulted once.

import { randomUUID } from 'node:crypto';
import type { FastifyServerFactory } from 'fastify';
import { kdpError } from '../errors.js';
import type { StoreBackend } from '../store/types.js';
import type { AdmissionPlugin, Authenticator, Authorizer } from './pipeline-types.js';
import type { LogProvider } from './rest/deps.js';
import type { ResourceCatalog } from './resource-types.js';
import type { Validator } from './rules.js';

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
  /** Fastify server factory (serve.ts passes its HTTP/HTTPS server). */
  readonly serverFactory?: FastifyServerFactory;
  /** Request body limit in bytes (default 3 MiB, as upstream). */
  readonly bodyLimit?: number;
  /** Interval of watch bookmarks (default 60 s). */
  readonly bookmarkIntervalMs?: number;
  /** Fastify/pino logging (default off). */
  readonly logger?: boolean;
  readonly now?: () => Date;
  readonly newUid?: () => string;
}

export interface ResolvedApiServerOptions extends ApiServerOptions {
  readonly anonymous: boolean;
  readonly bodyLimit: number;
  readonly bookmarkIntervalMs: number;
  readonly now: () => Date;
  readonly newUid: () => string;
}

export const DEFAULT_BODY_LIMIT = 3 * 1024 * 1024;

export function resolveApiServerOptions(o: ApiServerOptions): ResolvedApiServerOptions {
  if (!o || !o.store) throw kdpError('KDP_CONFIG', 'apiserver: a store is required');
  const r = {
    ...o,
    anonymous: o.anonymous ?? true,
    bodyLimit: o.bodyLimit ?? DEFAULT_BODY_LIMIT,
    bookmarkIntervalMs: o.bookmarkIntervalMs ?? 60_000,
    now: o.now ?? (() => new Date()),
    newUid: o.newUid ?? randomUUID,
  };
  for (const k of ['bodyLimit', 'bookmarkIntervalMs'] as const) {
    if (!Number.isInteger(r[k]) || r[k] < 1) {
      throw kdpError('KDP_CONFIG', `apiserver option ${k} must be a positive integer, got ${r[k]}`);
    }
  }
  return r;
}
