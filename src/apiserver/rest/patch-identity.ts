// What a patch may not change, as upstream's patch handler (endpoints/handlers/patch.go) and
// update path refuse it: the kind and apiVersion (a JSON or merge patch is decoded back into
// the URL's type: 422 "no kind ... is registered"; server-side apply's version check: 400
// "invalid object type"), the name (400, checkName), the namespace (400,
// EnsureObjectNamespaceMatchesRequestNamespace) and the uid (422, ObjectMeta update
// validation: "field is immutable"). A PUT whose uid differs fails its precondition (409).

import type { KubeObject } from '../../client/types.js';
import type { ServedResource } from '../resource-types.js';
import { groupVersion } from '../resource-types.js';
import { badRequest, conflict, invalid } from './errors.js';
import { objectKey } from './keys.js';
import { kdpError } from '../../errors.js';

/** The scheme name upstream's kube-apiserver puts in "not registered" errors. */
const SCHEME = 'pkg/api/legacyscheme/scheme.go:30';

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Go's %q of a string (close enough: JSON quoting). */
function quote(s: string): string {
  return JSON.stringify(s);
}

/** 422 as upstream's NewInvalid(schema.GroupKind{}, "", patch: Invalid value). */
function undecodable(patched: KubeObject, why: string) {
  const message = `Invalid value: ${quote(JSON.stringify(patched))}: ${why}`;
  return kdpError('KDP_INVALID', ` "" is invalid: patch: ${message}`, {
    name: '', kind: '', causes: [{ reason: 'FieldValueInvalid', field: 'patch', message }],
  });
}

/** The patched object's kind and apiVersion must stay the URL's (absent means the URL's). */
function checkType(r: ServedResource, patched: KubeObject): void {
  const kind = str(patched.kind) || r.kind;
  const gv = str(patched.apiVersion) || groupVersion(r);
  if (kind === r.kind && gv === groupVersion(r)) return;
  throw undecodable(patched, `no kind ${quote(kind)} is registered for version ${quote(gv)} ` +
    `in scheme ${quote(SCHEME)}`);
}

/** Name, namespace and uid after a JSON, merge or strategic patch; sets an absent namespace. */
export function checkPatchedIdentity(
  r: ServedResource, currentUid: string | undefined, patched: KubeObject, name: string,
  namespace: string | undefined,
): void {
  checkType(r, patched);
  const m = patched.metadata;
  checkName(str(m.name), name);
  if (r.namespaced) {
    const ns = str(m.namespace);
    if (ns && namespace && ns !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace ' +
        'sent on the request');
    }
  }
  const uid = str(m.uid);
  if (uid && uid !== currentUid) {
    throw invalid(r, name, [{ field: 'metadata.uid', reason: 'FieldValueInvalid',
      message: `Invalid value: ${quote(uid)}: field is immutable` }]);
  }
}

/** checkName in handlers/rest.go. */
export function checkName(objName: string, name: string): void {
  if (!objName) {
    throw badRequest(`the name of the object (${name} based on URL) was undeterminable: ` +
      'name must be provided');
  }
  if (objName !== name) {
    throw badRequest(`the name of the object (${objName}) does not match the name on the URL ` +
      `(${name})`);
  }
}

/** Server-side apply's version check (fieldmanager versioncheck.go): 400 on any other type. */
export function checkAppliedType(r: ServedResource, applied: unknown): void {
  const o = (applied && typeof applied === 'object' ? applied : {}) as Record<string, unknown>;
  const gv = str(o.apiVersion);
  const kind = str(o.kind);
  if (gv === groupVersion(r) && kind === r.kind) return;
  const slash = gv.lastIndexOf('/');
  const [g, v] = slash < 0 ? ['', gv] : [gv.slice(0, slash), gv.slice(slash + 1)];
  throw badRequest(`invalid object type: ${g}/${v}, Kind=${kind}`);
}

/** A PUT naming another uid fails its uid precondition, as upstream's storage answers it. */
export function checkPutUid(r: ServedResource, current: KubeObject, body: KubeObject): void {
  const uid = str(body.metadata.uid);
  if (!uid || uid === current.metadata.uid) return;
  const key = objectKey(r, current.metadata.namespace, current.metadata.name!);
  throw conflict(r, current.metadata.name!, 'StorageError: invalid object, Code: 4, Key: ' +
    `${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ` +
    `${uid}, UID in object meta: ${current.metadata.uid}`);
}
