// Upstream's error messages (apimachinery pkg/api/errors), so kubectl prints what users expect.

import { kdpError } from '../../errors.js';
import type { Cause, KdpError } from '../../errors.js';
import type { ServedResource } from '../resource-types.js';
import type { StoreBackend } from '../../store/types.js';
import { qualifiedResource } from '../resource-types.js';

function det(r: ServedResource, name: string) {
  return r.group ? { name, group: r.group, kind: r.resource } : { name, kind: r.resource };
}

export function notFound(r: ServedResource, name: string): KdpError {
  return kdpError('KDP_NOT_FOUND', `${qualifiedResource(r)} "${name}" not found`, det(r, name));
}

export function alreadyExists(r: ServedResource, name: string): KdpError {
  return kdpError('KDP_ALREADY_EXISTS', `${qualifiedResource(r)} "${name}" already exists`,
    det(r, name));
}

/**
 * Store conflicts an unconditional write retries before answering 409. Upstream retries without
 * a bound; with `settled` every retry follows a commit (some writer wins each round), so this
 * only caps pathological contention.
 */
export const CONFLICT_RETRIES = 32;

/**
 * Before retrying a store conflict on `key`: a write to the object may still be committing
 * (reads see committed state, conditional writes check pending ones). Waits for that commit
 * when the store can say (`settled`), so the retry comes as soon as it can succeed; otherwise
 * a timer — not a microtask: an immediate retry can spin forever and starve the commit.
 */
export function conflictBackoff(store: StoreBackend, key: string, attempt: number):
  Promise<void> {
  if (store.settled) return store.settled(key);
  return new Promise((res) => setTimeout(res, Math.min(2 ** attempt, 200)));
}

export function conflict(r: ServedResource, name: string, why?: string): KdpError {
  const tail = why ?? 'the object has been modified; please apply your changes to the latest ' +
    'version and try again';
  return kdpError('KDP_CONFLICT',
    `Operation cannot be fulfilled on ${qualifiedResource(r)} "${name}": ${tail}`, det(r, name));
}

/** 422 Invalid: details.kind is the Kind (not the resource), as upstream. */
export function invalid(r: ServedResource, name: string, causes: readonly Cause[]): KdpError {
  const kindQ = r.group ? `${r.kind}.${r.group}` : r.kind;
  const text = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const msg = `${kindQ} "${name}" is invalid: ` +
    (text.length > 1 ? `[${text.join(', ')}]` : (text[0] ?? ''));
  const d = r.group ? { name, group: r.group, kind: r.kind, causes } :
    { name, kind: r.kind, causes };
  return kdpError('KDP_INVALID', msg, d);
}

export function badRequest(msg: string): KdpError {
  return kdpError('KDP_BAD_REQUEST', msg);
}

export function pathNotFound(): KdpError {
  return kdpError('KDP_NOT_FOUND', 'the server could not find the requested resource');
}

export function methodNotAllowed(msg: string): KdpError {
  return kdpError('KDP_METHOD_NOT_ALLOWED', msg);
}
