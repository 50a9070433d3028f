// Type decoding for every served kind, as upstream's decode into Go structs: `decodeTypes`
// answers the first value of the wrong type (an int32 that is 1.5, "3" or 2^31, a map that is
// an array, bytes that are not base64) with the Go decoder's wording and the field path, and
// decodes nulls (dropped from structs, zero values in arrays and maps). The API server runs it
// on every written body before defaulting, so nothing of the wrong type is stored.

import { BUILTIN_RESOURCES, apiVersionOf } from '../registry.js';
import { compileDefs } from './compile.js';
import type { Defs, Mismatch, Node } from './compile.js';
import { CORE_TYPES, GROUP_TYPES } from './kind-types.js';
import { META_TYPES } from './meta-types.js';
import { POD_TYPES } from './pod-types.js';

/** A value of the wrong type. */
export interface TypeProblem {
  /** Path in upstream's field-path form: `spec.containers[0].ports[0].containerPort`. */
  readonly field: string;
  /** Go's decoder message: `json: cannot unmarshal string into Go struct field ...`. */
  readonly message: string;
}

/** Every type table, by name (kinds by their Kind; `Scale` is autoscaling/v1's). */
export const TYPE_DEFS: Defs = { ...META_TYPES, ...POD_TYPES, ...CORE_TYPES, ...GROUP_TYPES };

const resolve = compileDefs(TYPE_DEFS);

const ROOTS = new Map<string, Node>(BUILTIN_RESOURCES.map((r) =>
  [`${apiVersionOf(r)}|${r.kind}`, resolve(r.kind)]));
// Subresource bodies: scale, binding, eviction.
ROOTS.set('autoscaling/v1|Scale', resolve('Scale'));
ROOTS.set('v1|Binding', resolve('Binding'));
ROOTS.set('policy/v1|Eviction', resolve('Eviction'));

/** Whether `decodeTypes` knows the kind (every served kind and subresource body kind). */
export function hasTypeSchema(apiVersion: string, kind: string): boolean {
  return ROOTS.has(`${apiVersion}|${kind}`);
}

function render(m: Mismatch): TypeProblem {
  let field = '';
  let struct = '';
  const goFields: string[] = [];
  for (const s of m.segs) {
    if (s.k === 'field') {
      field += field ? `.${s.name}` : s.name;
      goFields.push(s.name);
      struct = s.struct;
    } else if (s.k === 'index') {
      field += `[${s.i}]`;
    } else {
      field += `[${s.key}]`;
    }
  }
  const into = goFields.length ? `Go struct field ${struct}.${goFields.join('.')}` : 'Go value';
  const message = m.raw ?? `json: cannot unmarshal ${m.value} into ${into} of type ${m.type}`;
  return { field, message };
}

function run(apiVersion: string, kind: string, obj: unknown, mutate: boolean):
  TypeProblem | undefined {
  const root = ROOTS.get(`${apiVersion}|${kind}`);
  if (!root) return undefined;
  const m = obj === null ? undefined : root.check(obj, mutate);
  return m && render(m);
}

/**
 * Decodes `obj` as the typed struct of `apiVersion`/`kind` in place (nulls dropped or zeroed)
 * and answers its first value of the wrong type, or undefined. Unknown kinds pass.
 */
export function decodeTypes(apiVersion: string, kind: string, obj: unknown):
  TypeProblem | undefined {
  return run(apiVersion, kind, obj, true);
}

/** `decodeTypes` without changing `obj` (nulls are accepted and left). */
export function findTypeProblem(apiVersion: string, kind: string, obj: unknown):
  TypeProblem | undefined {
  return run(apiVersion, kind, obj, false);
}
