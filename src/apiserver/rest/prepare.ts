// Server-owned fields: what create sets, what update keeps, and when generation moves.

import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../client/types.js';
import type { ServedResource } from '../resource-types.js';
import { groupVersion } from '../resource-types.js';
import { badRequest } from './errors.js';

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

function isStringMap(v: unknown): boolean {
  return !!v && typeof v === 'object' && !Array.isArray(v) &&
    Object.values(v).every((x) => typeof x === 'string');
}

function fail(field: string, want: string): never {
  throw badRequest(`json: cannot unmarshal into Go struct field ObjectMeta.metadata.${field} ` +
    `of type ${want}`);
}

/** What decoding into Go's ObjectMeta rejects (upstream answers 400 before validation). */
function checkMetadataTypes(m: unknown): void {
  if (typeof m !== 'object' || Array.isArray(m)) fail('', 'v1.ObjectMeta');
  const o = m as Record<string, unknown>;
  for (const f of ['name', 'generateName', 'namespace', 'uid', 'resourceVersion']) {
    if (o[f] !== undefined && o[f] !== null && typeof o[f] !== 'string') fail(f, 'string');
  }
  for (const f of ['labels', 'annotations']) {
    if (o[f] !== undefined && o[f] !== null && !isStringMap(o[f])) fail(f, 'map[string]string');
  }
  const fin = o.finalizers;
  if (fin !== undefined && fin !== null &&
    (!Array.isArray(fin) || !fin.every((x) => typeof x === 'string'))) {
    fail('finalizers', '[]string');
  }
  const refs = o.ownerReferences;
  if (refs !== undefined && refs !== null && (!Array.isArray(refs) ||
    !refs.every((x) => !!x && typeof x === 'object' && !Array.isArray(x)))) {
    fail('ownerReferences', '[]v1.OwnerReference');
  }
  const mf = o.managedFields;
  if (mf !== undefined && mf !== null && !Array.isArray(mf)) {
    fail('managedFields', '[]v1.ManagedFieldsEntry');
  }
  for (const f of Object.keys(o)) if (o[f] === null) delete o[f];
}

/** Checks kind/apiVersion and namespace of a request body against the URL. */
export function checkBody(r: ServedResource, obj: unknown, namespace?: string): KubeObject {
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) {
    throw badRequest('the body of the request must be a JSON or YAML object');
  }
  const o = obj as KubeObject;
  if (o.metadata === undefined || o.metadata === null) o.metadata = {};
  checkMetadataTypes(o.metadata);
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
  if (subresource === 'status') {
    out = { ...old, metadata: { ...old.metadata }, status: next.status };
    if (next.status === undefined) delete out.status;
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
