// Server-owned fields: what create sets, what update keeps, and when generation moves.

import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../client/types.js';
import type { ServedResource } from '../resource-types.js';
import { groupVersion } from '../resource-types.js';
import { decodeTypes } from '../../api/schema/index.js';
import type { TypeProblem } from '../../api/schema/index.js';
import { kdpError } from '../../errors.js';
import type { Cause, KdpError } from '../../errors.js';
import { badRequest } from './errors.js';
import { csrPrepareForUpdate, isCsrResource } from './csr-strategy.js';

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

export function randomSuffix(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += NAME_CHARS[Math.floor(Math.random() * NAME_CHARS.length)];
  return s;
}

// The last second formatted (a pure memo: every write in the same second has the same stamp,
// and toISOString is a visible share of a create's CPU). An invalid date never matches (NaN).
let lastSecond = NaN;
let lastStamp = '';

/** RFC 3339 without fractional seconds, as metav1.Time serialises. */
export function timestamp(d: Date): string {
  const sec = Math.floor(d.getTime() / 1000);
  if (sec === lastSecond) return lastStamp;
  const iso = d.toISOString();
  // `YYYY-MM-DDTHH:mm:ss.sssZ` for years 0-9999; other years keep their form, minus millis.
  lastStamp = iso.length === 24 ? `${iso.slice(0, 19)}Z` : iso.replace(/\.\d{3}Z$/, 'Z');
  lastSecond = sec;
  return lastStamp;
}

export function hasStatusSubresource(r: ServedResource): boolean {
  return r.subresources.some((s) => s.name === 'status');
}

/** What decoding into the kind's Go struct refuses: 400, as upstream's create and update. */
function cannotHandle(r: ServedResource, p: TypeProblem): KdpError {
  return kdpError('KDP_BAD_REQUEST', `${r.kind} in version "${r.version}" cannot be handled ` +
    `as a ${r.kind}: ${p.message}`, { causes: [typeCause(p)] });
}

function typeCause(p: TypeProblem): Cause {
  return { reason: 'FieldValueTypeInvalid', field: p.field, message: p.message };
}

/**
 * A JSON, merge or strategic patch's result must decode as the resource's type; upstream
 * answers 422 Invalid on field `patch` with the patched document and the decoder's message
 * (handlers/patch.go). A strategic patch whose own numbers do not decode (1e400) is refused
 * while reading the patch: 400. Nulls in the result are decoded (dropped or zeroed).
 */
export function checkPatchedTypes(
  r: ServedResource, type: string, patch: unknown, patched: KubeObject,
): void {
  checkPatchedAs(groupVersion(r), r.kind, type, patch, patched);
}

/** `checkPatchedTypes` for a patched autoscaling/v1 Scale (the `scale` subresource). */
export function checkPatchedScale(type: string, patch: unknown, scale: KubeObject): KubeObject {
  checkPatchedAs('autoscaling/v1', 'Scale', type, patch, scale);
  return scale;
}

function checkPatchedAs(gv: string, kind: string, type: string, patch: unknown,
  patched: KubeObject): void {
  const p = decodeTypes(gv, kind, patched);
  if (!p) return;
  if (type === 'strategic' && hasNonFinite(patch)) {
    throw kdpError('KDP_BAD_REQUEST', p.message, { causes: [typeCause(p)] });
  }
  const message = `Invalid value: ${JSON.stringify(JSON.stringify(patched))}: ${p.message}`;
  throw kdpError('KDP_INVALID', ` "" is invalid: patch: ${message}`, {
    name: '', kind: '', causes: [{ reason: 'FieldValueInvalid', field: 'patch', message }],
  });
}

function hasNonFinite(v: unknown, depth = 0): boolean {
  if (typeof v === 'number') return !Number.isFinite(v);
  if (!v || typeof v !== 'object' || depth > 100) return false;
  return Object.values(v).some((x) => hasNonFinite(x, depth + 1));
}

/**
 * A subresource body (Scale, Binding, Eviction) decoded as its `apiVersion`/`kind`: 400 "<Kind>
 * in version ... cannot be handled as a <Kind>" when a value has the wrong type.
 */
export function checkBodyAs(apiVersion: string, kind: string, body: unknown): KubeObject {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('the body of the request must be a JSON or YAML object');
  }
  const p = decodeTypes(apiVersion, kind, body);
  if (p) {
    const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
    throw kdpError('KDP_BAD_REQUEST', `${kind} in version "${version}" cannot be handled as a ` +
      `${kind}: ${p.message}`, { causes: [typeCause(p)] });
  }
  return body as KubeObject;
}

/** A Scale body (PUT on `scale`) decoded as autoscaling/v1 Scale. */
export function checkScaleBody(body: unknown): KubeObject {
  return checkBodyAs('autoscaling/v1', 'Scale', body);
}

/** Checks kind/apiVersion and namespace of a request body against the URL. */
export function checkBody(r: ServedResource, obj: unknown, namespace?: string): KubeObject {
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) {
    throw badRequest('the body of the request must be a JSON or YAML object');
  }
  const o = obj as KubeObject;
  if (o.metadata === undefined || o.metadata === null) o.metadata = {};
  if (o.kind !== undefined && o.kind !== '' && o.kind !== r.kind) {
    throw badRequest(`${o.kind} in version "${r.version}" cannot be handled as a ${r.kind}: ` +
      `the kind does not match ${r.kind}`);
  }
  if (o.apiVersion !== undefined && o.apiVersion !== '' && o.apiVersion !== groupVersion(r)) {
    throw badRequest(`the API version in the data (${o.apiVersion}) does not match the ` +
      `expected API version (${groupVersion(r)})`);
  }
  o.kind = r.kind;
  o.apiVersion = groupVersion(r);
  const problem = decodeTypes(groupVersion(r), r.kind, o);
  if (problem) throw cannotHandle(r, problem);
  if (r.namespaced) {
    const ns = o.metadata.namespace;
    if (ns && namespace && ns !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace ' +
        'sent on the request');
    }
    if (namespace) o.metadata.namespace = namespace;
  } else {
    delete o.metadata.namespace;
  }
  return o;
}

/** Sets uid, creationTimestamp, generation and a name from generateName. */
export function prepareForCreate(r: ServedResource, o: KubeObject, now: Date, uid: string): void {
  const m = o.metadata;
  if (!m.name && m.generateName) m.name = m.generateName + randomSuffix(5);
  m.uid = uid;
  m.creationTimestamp = timestamp(now);
  m.generation = 1;
  delete m.resourceVersion;
  delete m.deletionTimestamp;
  delete m.deletionGracePeriodSeconds;
  delete (m as Record<string, unknown>).selfLink;
  if (hasStatusSubresource(r)) initialStatus(r, o);
}

function initialStatus(r: ServedResource, o: KubeObject): void {
  if (r.group === '' && r.resource === 'pods') {
    o.status = { phase: 'Pending', qosClass: qosClass(o) };
  } else if (r.group === '' && r.resource === 'namespaces') {
    o.status = { phase: 'Active' };
  } else if (r.group === '' && r.resource === 'nodes') {
    // Nodes register themselves with their status (kubelet create); keep it.
  } else {
    delete o.status;
  }
}

type Res = { requests?: Record<string, string>; limits?: Record<string, string> };

function qosClass(pod: KubeObject): string {
  const spec = (pod.spec ?? {}) as { containers?: Array<{ resources?: Res }> };
  const cs = spec.containers ?? [];
  let any = false;
  let guaranteed = cs.length > 0;
  for (const c of cs) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    if (Object.keys(req).length || Object.keys(lim).length) any = true;
    for (const k of ['cpu', 'memory']) {
      if (!lim[k] || (req[k] !== undefined && req[k] !== lim[k])) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function specPart(o: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, kind: _k, apiVersion: _a, ...rest } = o;
  return rest;
}

/**
 * Carries server-owned fields from `old` into `next` (an update of the main resource or of
 * `status`), and bumps generation when anything but metadata and status changed.
 */
export function prepareForUpdate(
  r: ServedResource, next: KubeObject, old: KubeObject, subresource?: string, deleting = false,
): KubeObject {
  let out = next;
  if (isCsrResource(r)) {
    out = csrPrepareForUpdate(next, old, subresource, new Date());
  } else if (subresource === 'status') {
    out = { ...old, metadata: { ...old.metadata }, status: next.status };
    if (next.status === undefined) delete out.status;
  } else if (subresource === 'ephemeralcontainers') {
    // Only spec.ephemeralContainers is written through this subresource.
    const spec = { ...((old.spec ?? {}) as Record<string, unknown>) };
    const eph = (next.spec as { ephemeralContainers?: unknown } | undefined)?.ephemeralContainers;
    if (eph === undefined) delete spec.ephemeralContainers; else spec.ephemeralContainers = eph;
    out = { ...old, metadata: { ...old.metadata }, spec };
  } else if (subresource === 'finalize') {
    const spec = { ...((old.spec ?? {}) as Record<string, unknown>) };
    spec.finalizers = (next.spec as { finalizers?: unknown } | undefined)?.finalizers;
    out = { ...old, metadata: { ...old.metadata }, spec };
  } else if (hasStatusSubresource(r) && subresource !== 'binding') {
    out = { ...next };
    if (old.status === undefined) delete out.status; else out.status = old.status;
  }
  const m = out.metadata;
  const om = old.metadata;
  m.name = om.name;
  if (r.namespaced) m.namespace = om.namespace; else delete m.namespace;
  m.uid = om.uid;
  m.creationTimestamp = om.creationTimestamp;
  const src = deleting ? { ...m } : om;
  if (src.deletionTimestamp) m.deletionTimestamp = src.deletionTimestamp;
  else delete m.deletionTimestamp;
  if (src.deletionGracePeriodSeconds !== undefined) {
    m.deletionGracePeriodSeconds = src.deletionGracePeriodSeconds;
  } else delete m.deletionGracePeriodSeconds;
  m.generation = om.generation ?? 1;
  if (!isDeepStrictEqual(specPart(out), specPart(old))) m.generation += 1;
  return out;
}

/** Equal apart from resourceVersion and managedFields timestamps: the write can be skipped. */
export function unchanged(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: '' } });
  return isDeepStrictEqual(strip(a), strip(b));
}
