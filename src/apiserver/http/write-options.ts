// Options of writes from the query (and a DELETE's body), validated as upstream's handlers do
// (apis/meta/v1/validation: ValidateCreateOptions, ValidateUpdateOptions, ValidatePatchOptions,
// ValidateDeleteOptions): a bad value is 422 Invalid for `<Verb>Options.meta.k8s.io` with one
// cause per field, checked before anything is read or written.

import type { DeleteOptions } from '../../client/types.js';
import type { Cause } from '../../errors.js';
import { kdpError } from '../../errors.js';
import type { Query } from './query.js';
import { q, qInt } from './query.js';

type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

const FIELD_VALIDATION = ['', 'Ignore', 'Strict', 'Warn'];
const POLICIES = ['Foreground', 'Background', 'Orphan'];
const FIELD_MANAGER_MAX = 128;

function goList(values: readonly string[]): string {
  return `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
}

function supported(values: readonly string[]): string {
  return values.map((v) => `"${v}"`).join(', ');
}

function invalidOptions(kind: OptionsKind, causes: Cause[]) {
  const text = causes.map((c) => `${c.field}: ${c.message}`);
  return kdpError('KDP_INVALID', `${kind}.meta.k8s.io "" is invalid: ` +
    (text.length > 1 ? `[${text.join(', ')}]` : text[0]!),
  { name: '', group: 'meta.k8s.io', kind, causes });
}

function all(query: Query, name: string): string[] {
  const v = query[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function dryRunCauses(values: readonly string[]): Cause[] {
  if (values.length === 0 || (values.length === 1 && values[0] === 'All')) return [];
  return [{ field: 'dryRun', reason: 'FieldValueNotSupported',
    message: `Unsupported value: ${goList(values)}: supported values: "All"` }];
}

export interface WriteQuery {
  readonly dryRun: boolean;
  readonly fieldManager?: string;
}

/** dryRun, fieldManager and fieldValidation of a create, update or patch. */
export function writeOptionsOf(query: Query, kind: Exclude<OptionsKind, 'DeleteOptions'>,
  extra: Cause[] = []): WriteQuery {
  const dry = all(query, 'dryRun');
  const causes = [...dryRunCauses(dry)];
  const fm = q(query, 'fieldManager');
  if (fm !== undefined && Buffer.byteLength(fm) > FIELD_MANAGER_MAX) {
    causes.push({ field: 'fieldManager', reason: 'FieldValueTooLong',
      message: `Too long: may not be more than ${FIELD_MANAGER_MAX} bytes` });
  }
  const fv = q(query, 'fieldValidation');
  if (fv !== undefined && !FIELD_VALIDATION.includes(fv)) {
    causes.push({ field: 'fieldValidation', reason: 'FieldValueNotSupported', message:
      `Unsupported value: ${JSON.stringify(fv)}: supported values: ` +
      supported(FIELD_VALIDATION) });
  }
  causes.push(...extra);
  if (causes.length) throw invalidOptions(kind, causes);
  return { dryRun: dry.length > 0, fieldManager: fm };
}

/** PatchOptions rules of a patch type: apply needs a fieldManager, only apply takes force. */
export function patchOptionCauses(query: Query, apply: boolean): Cause[] {
  if (apply && !q(query, 'fieldManager')) {
    return [{ field: 'fieldManager', reason: 'FieldValueRequired',
      message: 'Required value: is required for apply patch' }];
  }
  if (!apply && q(query, 'force') !== undefined) {
    return [{ field: 'force', reason: 'FieldValueForbidden',
      message: 'Forbidden: may not be specified for non-apply patch' }];
  }
  return [];
}

/** DeleteOptions from the query and the body (query wins, as upstream decodes both). */
export function deleteOptionsOf(body: unknown, query: Query): DeleteOptions {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const grace = qInt(query, 'gracePeriodSeconds') ?? (typeof b.gracePeriodSeconds === 'number' ?
    b.gracePeriodSeconds : undefined);
  const rawPolicy = q(query, 'propagationPolicy') ?? b.propagationPolicy;
  const orphan = q(query, 'orphanDependents') ?? b.orphanDependents;
  const dry = [...all(query, 'dryRun'),
    ...(Array.isArray(b.dryRun) ? b.dryRun.map(String) : [])];
  const causes = [...dryRunCauses(dry)];
  if (orphan !== undefined && rawPolicy !== undefined) {
    causes.push({ field: 'propagationPolicy', reason: 'FieldValueInvalid', message:
      `Invalid value: ${JSON.stringify(String(rawPolicy))}: orphanDependents and ` +
      'deletionPropagation cannot be both set' });
  }
  if (rawPolicy !== undefined && !POLICIES.includes(String(rawPolicy))) {
    causes.push({ field: 'propagationPolicy', reason: 'FieldValueNotSupported', message:
      `Unsupported value: ${JSON.stringify(String(rawPolicy))}: supported values: ` +
      `${supported([...POLICIES, 'nil'])}` });
  }
  if (causes.length) throw invalidOptions('DeleteOptions', causes);
  const policy = rawPolicy as DeleteOptions['propagationPolicy'] | undefined;
  const orphans = orphan === true || (typeof orphan === 'string' && orphan !== '0' &&
    orphan.toLowerCase() !== 'false');
  return { gracePeriodSeconds: grace, propagationPolicy: policy ?? (orphans ? 'Orphan' :
    undefined), preconditions: b.preconditions as DeleteOptions['preconditions'],
  dryRun: dry.length > 0 };
}
