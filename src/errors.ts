// The one error catalogue. Every error kdp raises on purpose is a KdpError made here, with a
// stable code that callers branch on, an HTTP status (for the API server) and a Kubernetes
// Status reason. The README's error table is checked against this list by a test.
//
// Adding a code: put it in its section, keep codes UPPER_SNAKE with the `KDP_` prefix, and add
// the row to README.md (the test tells you if you forget).

/** A Kubernetes `StatusReason` (metav1.StatusReason). */
export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout'
  | '';

export interface CatalogueEntry {
  /** HTTP status the API server answers with. CLI-only errors use 500 (never served). */
  readonly status: number;
  readonly reason: StatusReason;
  /** One line for the README table: when this error happens. */
  readonly summary: string;
}

export const CATALOGUE = {
  // --- API objects and requests
  KDP_BAD_REQUEST: { status: 400, reason: 'BadRequest', summary: 'malformed request body, query or path' },
  KDP_UNAUTHORIZED: { status: 401, reason: 'Unauthorized', summary: 'missing or invalid credentials' },
  KDP_FORBIDDEN: { status: 403, reason: 'Forbidden', summary: 'authorization (RBAC) or admission denied the request' },
  KDP_NOT_FOUND: { status: 404, reason: 'NotFound', summary: 'object or resource does not exist' },
  KDP_METHOD_NOT_ALLOWED: { status: 405, reason: 'MethodNotAllowed', summary: 'verb not supported by the resource' },
  KDP_NOT_ACCEPTABLE: { status: 406, reason: 'NotAcceptable', summary: 'no acceptable response media type' },
  KDP_ALREADY_EXISTS: { status: 409, reason: 'AlreadyExists', summary: 'an object with that name already exists' },
  KDP_CONFLICT: { status: 409, reason: 'Conflict', summary: 'stale resourceVersion or failed precondition' },
  KDP_REQUEST_TIMEOUT: { status: 408, reason: 'Timeout', summary: 'request headers not received in time (HTTP layer)' },
  KDP_GONE: { status: 410, reason: 'Expired', summary: 'requested resourceVersion was compacted' },
  KDP_TOO_LARGE: { status: 413, reason: 'RequestEntityTooLarge', summary: 'request body over 3 MiB' },
  KDP_UNSUPPORTED_MEDIA_TYPE: { status: 415, reason: 'UnsupportedMediaType', summary: 'request Content-Type not supported' },
  KDP_EXPECTATION_FAILED: { status: 417, reason: '', summary: 'Expect header other than 100-continue (HTTP layer)' },
  KDP_TOO_MANY_REQUESTS: { status: 429, reason: 'TooManyRequests', summary: 'an eviction would violate a PodDisruptionBudget (retry later)' },
  KDP_HEADERS_TOO_LARGE: { status: 431, reason: '', summary: 'request line and headers over the limit (HTTP layer)' },
  KDP_INVALID: { status: 422, reason: 'Invalid', summary: 'object failed validation (causes list every field)' },
  KDP_INTERNAL: { status: 500, reason: 'InternalError', summary: 'unexpected server error' },
  KDP_NOT_IMPLEMENTED: { status: 501, reason: '', summary: 'Transfer-Encoding other than chunked (HTTP layer)' },
  KDP_UNAVAILABLE: { status: 503, reason: 'ServiceUnavailable', summary: 'component not ready or shutting down' },
  KDP_TIMEOUT: { status: 504, reason: 'Timeout', summary: 'operation did not finish in time' },
  // --- store
  KDP_STORE_CORRUPT: { status: 500, reason: 'InternalError', summary: 'data directory holds an unreadable WAL or snapshot' },
  KDP_STORE_CLOSED: { status: 503, reason: 'ServiceUnavailable', summary: 'store used after close' },
  KDP_STORE_LOCKED: { status: 503, reason: 'ServiceUnavailable', summary: 'data directory is in use by another live process' },
  // --- configuration and CLI
  KDP_CONFIG: { status: 500, reason: 'BadRequest', summary: 'invalid flag, config file field or CIDR' },
  KDP_INPUT: { status: 500, reason: 'BadRequest', summary: 'invalid input file: YAML, kind or field (names document and field)' },
  KDP_PARSE: { status: 500, reason: 'BadRequest', summary: 'rule dump line that does not parse (names line and reason)' },
  KDP_NOT_RUNNING: { status: 500, reason: '', summary: 'no running cluster for this data directory' },
  // --- host / kernel
  KDP_HOST_EXEC: { status: 500, reason: 'InternalError', summary: 'a kernel tool (ip, nft, iptables-restore) failed' },
  KDP_NEEDS_ROOT: { status: 500, reason: '', summary: 'operation needs root and network namespaces' },
  // --- tracer / diff
  KDP_TRACE: { status: 500, reason: '', summary: 'packet cannot be traced (unknown endpoint, unsupported rule)' },
  KDP_DIFF: { status: 500, reason: '', summary: 'tables cannot be compared (mixed formats without --behaviour)' },
  // --- live tracing (netns mode)
  KDP_LIVE_VIRTUAL: { status: 500, reason: '', summary: '--live needs a netns cluster (`sudo kdp up`), not a virtual one' },
  KDP_LIVE_CAPTURE: { status: 500, reason: '', summary: 'tcpdump or the kernel trace monitor did not start, or its output is unreadable' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof CATALOGUE;

/** One field-level problem; rendered as a Status cause `{reason, message, field}`. */
export interface Cause {
  /** Field path as upstream prints it, e.g. `spec.ports[0].port`. */
  readonly field: string;
  /** Upstream CauseType, e.g. `FieldValueInvalid`, `FieldValueRequired`. */
  readonly reason: string;
  readonly message: string;
}

export interface KdpErrorDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly causes?: readonly Cause[];
  readonly retryAfterSeconds?: number;
}

/** The only error type kdp throws on purpose. Branch on `code`, never on `message`. */
export class KdpError extends Error {
  readonly code: ErrorCode;
  readonly details: KdpErrorDetails;

  constructor(code: ErrorCode, message: string, details: KdpErrorDetails = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'KdpError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return CATALOGUE[this.code].status;
  }

  get reason(): StatusReason {
    return CATALOGUE[this.code].reason;
  }
}

/** Factory: `kdpError('KDP_NOT_FOUND', 'pods "x" not found', {name: 'x', kind: 'pods'})`. */
export function kdpError(code: ErrorCode, message: string, details?: KdpErrorDetails, cause?: unknown): KdpError {
  return new KdpError(code, message, details, cause);
}

export function isKdpError(e: unknown, code?: ErrorCode): e is KdpError {
  return e instanceof KdpError && (code === undefined || e.code === code);
}
