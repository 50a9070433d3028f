// Server-side field validation of unknown fields (the `fieldValidation` query parameter), as
// upstream's handlers apply it: Strict refuses a body with fields its kind's schema does not
// declare (400 "strict decoding error: unknown field …"), Warn (the default) answers them as
// `Warning` headers, Ignore skips the check; under Warn and Ignore the unknown fields are dropped
// from the body, as upstream's decoder drops them. A body whose values have the wrong type is
// left to the type decoding, which upstream reports first. Covers create, update and
// merge/strategic patches of a resource or its status; other subresources' bodies and JSON /
// apply patches are not checked.

import { decodeTypes } from '../../api/schema/index.js';
import type { FieldChecker } from '../openapi/unknown-fields.js';
import { sharedFieldChecker, strictDecodingMessage } from '../openapi/unknown-fields.js';
import { badRequest } from '../rest/errors.js';
import type { ServedResource } from '../resource-types.js';
import type { Query } from './query.js';
import { q } from './query.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/** The request's directive; absent or empty is Warn, as upstream. (Values are checked elsewhere.) */
export function fieldValidationOf(query: Query): FieldValidation {
  const v = q(query, 'fieldValidation');
  return v === 'Ignore' || v === 'Strict' ? v : 'Warn';
}

export interface BodyCheck {
  readonly resource: ServedResource;
  readonly subresource?: string;
  readonly directive: FieldValidation;
  /** 'create' and 'update' report in document order; patches sorted, as upstream. */
  readonly op: 'create' | 'update' | 'merge' | 'strategic' | string;
  readonly body: unknown;
  readonly yaml?: boolean;
}

/**
 * The `Warning` header value for the body's unknown fields (undefined when none), which are
 * removed from `c.body`; throws the upstream 400 under Strict.
 */
export function checkUnknownFields(c: BodyCheck, checker: FieldChecker = sharedFieldChecker()):
  string | undefined {
  const r = c.resource;
  if (c.subresource && c.subresource !== 'status') return undefined;
  const patch = c.op !== 'create' && c.op !== 'update';
  if (patch && c.op !== 'merge' && c.op !== 'strategic') return undefined;
  const strict = c.directive === 'Strict';
  const fields = checker.unknownFields(r.group, r.version, r.kind, c.body,
    { patch, prune: !strict });
  if (fields.length === 0 || c.directive === 'Ignore') return undefined;
  if (patch || c.yaml) fields.sort();
  if (strict) {
    const gv = r.group ? `${r.group}/${r.version}` : r.version;
    // A value of the wrong type is what upstream's decoder reports instead.
    if (!patch && decodeTypes(gv, r.kind, structuredClone(c.body))) return undefined;
    const msg = strictDecodingMessage(fields);
    throw badRequest(patch ? msg
      : `${r.kind} in version "${r.version}" cannot be handled as a ${r.kind}: ${msg}`);
  }
  return fields.map((f) => `299 - ${JSON.stringify(`unknown field "${f}"`)}`).join(', ');
}
