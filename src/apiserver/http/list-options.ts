// List and watch options from the query, decoded and validated as upstream's ListResource
// (handlers/get.go): parameters that do not decode are 400 BadRequest; options that decode
// but break ListOptions validation (apis/meta/internalversion/validation) are 422 Invalid for
// `ListOptions.meta.k8s.io` with one cause per field.

import type { Cause } from '../../errors.js';
import { kdpError } from '../../errors.js';
import type { ServiceListOptions } from '../rest/read.js';
import { parseResourceVersion } from '../rest/resource-version.js';
import type { Query } from './query.js';
import { q, qBool, qInt } from './query.js';

function invalidListOptions(causes: Cause[]) {
  const text = causes.map((c) => `${c.field}: ${c.message}`);
  return kdpError('KDP_INVALID', 'ListOptions.meta.k8s.io "" is invalid: ' +
    (text.length > 1 ? `[${text.join(', ')}]` : text[0]!),
  { name: '', group: 'meta.k8s.io', kind: 'ListOptions', causes });
}

const forbidden = (field: string, why: string): Cause =>
  ({ field, reason: 'FieldValueForbidden', message: `Forbidden: ${why}` });

function notSupported(field: string, value: string, allowed: string[]): Cause {
  return { field, reason: 'FieldValueNotSupported', message: `Unsupported value: ` +
    `${JSON.stringify(value)}: supported values: ${allowed.map((a) => `"${a}"`).join(', ')}` };
}

/** sendInitialEvents: absent, or a boolean as upstream reads it. */
function sendInitialEvents(query: Query): boolean | undefined {
  return q(query, 'sendInitialEvents') === undefined ? undefined : qBool(query,
    'sendInitialEvents');
}

/** The options of a list (not a watch); throws 400/422 as upstream. */
export function listOptionsOf(query: Query): ServiceListOptions {
  const opts = { labelSelector: q(query, 'labelSelector'),
    fieldSelector: q(query, 'fieldSelector'), limit: qInt(query, 'limit'),
    continue: q(query, 'continue'), resourceVersion: q(query, 'resourceVersion'),
    resourceVersionMatch: q(query, 'resourceVersionMatch') };
  qInt(query, 'timeoutSeconds');
  parseResourceVersion(opts.resourceVersion);
  const causes: Cause[] = [];
  const match = opts.resourceVersionMatch;
  if (match) {
    if (!opts.resourceVersion) {
      causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless ' +
        'resourceVersion is provided'));
    }
    if (opts.continue) {
      causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when ' +
        'continue is provided'));
    }
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      causes.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    }
    if (match === 'Exact' && opts.resourceVersion === '0') {
      causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is ' +
        'forbidden for resourceVersion "0"'));
    }
  }
  if (sendInitialEvents(query) !== undefined) {
    causes.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  }
  if (causes.length) throw invalidListOptions(causes);
  return opts;
}

/** Checks a watch's options (validateWatchOptions); throws 400/422 as upstream. */
export function checkWatchOptions(query: Query): void {
  parseResourceVersion(q(query, 'resourceVersion'));
  const match = q(query, 'resourceVersionMatch') ?? '';
  const initial = sendInitialEvents(query);
  const causes: Cause[] = [];
  if (initial !== undefined && match !== 'NotOlderThan') {
    causes.push(forbidden('resourceVersionMatch', 'sendInitialEvents requires setting ' +
      'resourceVersionMatch to NotOlderThan'));
  }
  if (initial !== undefined) {
    // kdp's watches do not stream a list (no initial-events-end bookmark): refused as upstream
    // does without the WatchList feature, so client-go falls back to list and watch.
    causes.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch ' +
      'unless the WatchList feature gate is enabled'));
  }
  if (match) {
    if (initial === undefined) {
      causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for ' +
        'watch unless sendInitialEvents is provided'));
    }
    if (match !== 'NotOlderThan') {
      causes.push(notSupported('resourceVersionMatch', match, ['NotOlderThan']));
    }
  }
  if (causes.length) throw invalidListOptions(causes);
}
