// Every error leaves the API server as a metav1.Status with kind/apiVersion set (client-go
// discards the message otherwise). KdpError carries code, reason and details; anything else is
// an InternalError whose message is kept.

import { isKdpError, kdpError } from '../errors.js';
import type { KdpError } from '../errors.js';

export interface StatusObject {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: Record<string, unknown>;
  code: number;
}

export function toKdpError(e: unknown): KdpError {
  if (isKdpError(e)) return e;
  const msg = e instanceof Error ? e.message : String(e);
  return kdpError('KDP_INTERNAL', msg, { causes: [{ field: '', reason: '', message: msg }] }, e);
}

/**
 * Reasons whose upstream constructors (NewNotFound, NewForbidden, NewGenericServerResponse, …)
 * always set `details`, so it is serialised even when empty (`"details":{}`). Clients rely on
 * it: kubectl debug dereferences the details of a 404 to tell a missing subresource apart.
 */
const ALWAYS_DETAILED: ReadonlySet<string> = new Set([
  'NotFound', 'AlreadyExists', 'Conflict', 'Invalid', 'Forbidden', 'MethodNotAllowed',
]);

export function statusFromError(e: unknown): StatusObject {
  const err = toKdpError(e);
  const d = err.details;
  const details: Record<string, unknown> = {};
  if (d.name !== undefined) details.name = d.name;
  if (d.group) details.group = d.group;
  if (d.kind !== undefined) details.kind = d.kind;
  if (d.causes?.length) {
    details.causes = d.causes.map((c) => {
      const out: Record<string, string> = {};
      if (c.reason) out.reason = c.reason;
      if (c.message) out.message = c.message;
      if (c.field) out.field = c.field;
      return out;
    });
  }
  if (d.retryAfterSeconds !== undefined) details.retryAfterSeconds = d.retryAfterSeconds;
  const st: StatusObject = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: err.message,
    code: err.status,
  };
  if (err.reason) st.reason = err.reason;
  if (Object.keys(details).length || (err.reason && ALWAYS_DETAILED.has(err.reason))) st.details = details;
  return st;
}

export function successStatus(details: Record<string, unknown>): StatusObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details, code: 200 };
}
