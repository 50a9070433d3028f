// Builders for validation causes, worded as upstream's field.Error (apimachinery
// pkg/util/validation/field). `message` is upstream's ErrorBody(); the API server joins
// `${field}: ${message}` into the Status message, as upstream's ToAggregate does.

import type { Cause } from '../../errors.js';

export type { Cause };

/** Renders a value as upstream's ErrorBody does (%q for strings, %v for numbers). */
export function formatValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) {
    return `[]string{${v.map((x) => JSON.stringify(x)).join(', ')}}`;
  }
  if (typeof v === 'object' && Object.values(v).every((x) => typeof x === 'string')) {
    const m = v as Record<string, string>;
    const entries = Object.keys(m).sort()
      .map((k) => `${JSON.stringify(k)}:${JSON.stringify(m[k])}`);
    return `map[string]string{${entries.join(', ')}}`;
  }
  return JSON.stringify(v);
}

export function required(field: string, detail = ''): Cause {
  return { field, reason: 'FieldValueRequired',
    message: detail ? `Required value: ${detail}` : 'Required value' };
}

export function invalid(field: string, value: unknown, detail: string): Cause {
  const body = `Invalid value: ${formatValue(value)}`;
  return { field, reason: 'FieldValueInvalid', message: detail ? `${body}: ${detail}` : body };
}

export function notSupported(field: string, value: unknown, valid: readonly string[]): Cause {
  const list = valid.map((x) => JSON.stringify(x)).join(', ');
  const detail = valid.length > 0 ? `: supported values: ${list}` : '';
  return {
    field, reason: 'FieldValueNotSupported',
    message: `Unsupported value: ${formatValue(value)}${detail}`,
  };
}

export function duplicate(field: string, value: unknown): Cause {
  return { field, reason: 'FieldValueDuplicate',
    message: `Duplicate value: ${formatValue(value)}` };
}

export function notFound(field: string, value: unknown): Cause {
  return { field, reason: 'FieldValueNotFound', message: `Not found: ${formatValue(value)}` };
}

export function forbidden(field: string, detail: string): Cause {
  return { field, reason: 'FieldValueForbidden', message: `Forbidden: ${detail}` };
}

export function tooLong(field: string, max: number): Cause {
  const unit = max === 1 ? 'byte' : 'bytes';
  return { field, reason: 'FieldValueTooLong',
    message: `Too long: may not be more than ${max} ${unit}` };
}

export function tooMany(field: string, actual: number, max: number): Cause {
  return {
    field, reason: 'FieldValueTooMany',
    message: `Too many: ${actual}: must have at most ${max} items`,
  };
}

/** Upstream's immutable-field cause: `Invalid value: ...: field is immutable`. */
export function immutable(field: string, value: unknown): Cause {
  return invalid(field, value, 'field is immutable');
}

/** `Kind "name" is invalid: a: x` or `... is invalid: [a: x, b: y]`, as upstream NewInvalid. */
export function invalidMessage(kind: string, name: string, causes: readonly Cause[]): string {
  const parts = causes.map((c) => `${c.field}: ${c.message}`);
  const body = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  return `${kind} "${name}" is invalid: ${body}`;
}

/** One `invalid` cause per message (upstream's `for _, msg := range IsX(v)` loop). */
export function invalidEach(field: string, value: unknown, messages: readonly string[]): Cause[] {
  return messages.map((m) => invalid(field, value, m));
}
