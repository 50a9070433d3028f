// Applies a JSON, merge or strategic patch to an object; the result must stay an object of the
// same name. A resourceVersion the patch sets pins the write (409 when stale).

import type { KubeObject, PatchType } from '../../client/types.js';
import { applyJsonPatch } from '../patch/json-patch.js';
import { applyMergePatch } from '../patch/merge-patch.js';
import { applyStrategicMergePatch } from '../patch/strategic.js';
import { sharedPatchMeta } from '../openapi/unknown-fields.js';
import { badRequest } from './errors.js';

export function applyPatch(cur: KubeObject, type: Exclude<PatchType, 'apply'>, patch: unknown):
  KubeObject {
  const rv = cur.metadata.resourceVersion;
  let out: unknown;
  if (type === 'json') out = applyJsonPatch(cur, patch);
  else if (type === 'merge') out = applyMergePatch(cur, patch);
  else {
    // Lists merge as the kind's upstream schema says, as kubectl computed the patch.
    const meta = sharedPatchMeta().forKind(cur.apiVersion ?? '', cur.kind ?? '');
    out = applyStrategicMergePatch(cur, patch, { meta });
  }
  if (!out || typeof out !== 'object' || Array.isArray(out)) {
    throw badRequest('the patch turned the object into a non-object');
  }
  const o = out as KubeObject;
  if (!o.metadata || typeof o.metadata !== 'object' || Array.isArray(o.metadata)) {
    throw badRequest('the patched object has no valid metadata (it must be an object)');
  }
  if (o.metadata.resourceVersion === rv) delete o.metadata.resourceVersion;
  return o;
}
