// A Kubernetes `Status` error body as a KdpError: the code follows `reason` (then the HTTP
// status), the message and details (name, group, kind, causes, retryAfterSeconds) are kept.

import { kdpError, type Cause, type ErrorCode, type KdpError } from '../errors.js';

const BY_REASON: Readonly<Record<string, ErrorCode>> = {
  BadRequest: 'KDP_BAD_REQUEST', Unauthorized: 'KDP_UNAUTHORIZED', Forbidden: 'KDP_FORBIDDEN',
  NotFound: 'KDP_NOT_FOUND', AlreadyExists: 'KDP_ALREADY_EXISTS', Conflict: 'KDP_CONFLICT',
  Gone: 'KDP_GONE', Expired: 'KDP_GONE', Invalid: 'KDP_INVALID',
  MethodNotAllowed: 'KDP_METHOD_NOT_ALLOWED', NotAcceptable: 'KDP_NOT_ACCEPTABLE',
  RequestEntityTooLarge: 'KDP_TOO_LARGE', UnsupportedMediaType: 'KDP_UNSUPPORTED_MEDIA_TYPE',
  TooManyRequests: 'KDP_TOO_MANY_REQUESTS', InternalError: 'KDP_INTERNAL',
  ServiceUnavailable: 'KDP_UNAVAILABLE', Timeout: 'KDP_TIMEOUT', ServerTimeout: 'KDP_TIMEOUT',
};

const BY_CODE: Readonly<Record<number, ErrorCode>> = {
  400: 'KDP_BAD_REQUEST', 401: 'KDP_UNAUTHORIZED', 403: 'KDP_FORBIDDEN', 404: 'KDP_NOT_FOUND',
  405: 'KDP_METHOD_NOT_ALLOWED', 406: 'KDP_NOT_ACCEPTABLE', 409: 'KDP_CONFLICT',
  410: 'KDP_GONE', 413: 'KDP_TOO_LARGE', 415: 'KDP_UNSUPPORTED_MEDIA_TYPE',
  422: 'KDP_INVALID', 429: 'KDP_TOO_MANY_REQUESTS', 503: 'KDP_UNAVAILABLE', 504: 'KDP_TIMEOUT',
};

interface StatusLike {
  kind?: string;
  code?: number;
  reason?: string;
  message?: string;
  details?: {
    name?: string; group?: string; kind?: string; retryAfterSeconds?: number;
    causes?: Array<{ field?: string; reason?: string; message?: string }>;
  };
}

/** The error for an HTTP response `status` with body `text` (a Status, or anything else). */
export function errorFromResponse(status: number, text: string): KdpError {
  let st: StatusLike = {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object') st = parsed as StatusLike;
  } catch { /* not JSON: keep the text as the message */ }
  const code = BY_REASON[st.reason ?? ''] ?? BY_CODE[st.code ?? status] ?? 'KDP_INTERNAL';
  const message = st.message || text.trim() || `the server answered HTTP ${status}`;
  const d = st.details ?? {};
  const causes: Cause[] | undefined = d.causes?.map((c) => ({
    field: c.field ?? '', reason: c.reason ?? '', message: c.message ?? '',
  }));
  return kdpError(code, message, {
    ...(d.name ? { name: d.name } : {}), ...(d.group ? { group: d.group } : {}),
    ...(d.kind ? { kind: d.kind } : {}), ...(causes ? { causes } : {}),
    ...(d.retryAfterSeconds ? { retryAfterSeconds: d.retryAfterSeconds } : {}),
  });
}

/** A transport failure (refused, reset, TLS) as KDP_UNAVAILABLE naming the server. */
export function transportError(server: string, e: Error): KdpError {
  const code = (e as NodeJS.ErrnoException).code;
  return kdpError('KDP_UNAVAILABLE',
    `cannot reach the API server at ${server}: ${code ? `${code} ` : ''}${e.message}`, {}, e);
}
