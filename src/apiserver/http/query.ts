// Query parameters as upstream reads them (repeated parameters: first value wins).

import { kdpError } from '../../errors.js';

export type Query = Record<string, string | string[] | undefined>;

export function q(query: Query, name: string): string | undefined {
  const v = query[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * A boolean parameter as upstream decodes every one (apimachinery runtime
 * Convert_Slice_string_To_bool, not strconv.ParseBool): absent, "0" and "false" in any case
 * are false; every other value, "" and "True" included, is true; none is refused.
 */
export function qBool(query: Query, name: string): boolean {
  const v = q(query, name);
  if (v === undefined) return false;
  return v !== '0' && v.toLowerCase() !== 'false';
}

const INT64_MAX = 9223372036854775807n;

/** An int64 parameter (strconv.ParseInt); 400 when it does not parse or overflows. */
export function qInt(query: Query, name: string): number | undefined {
  const v = q(query, name);
  if (v === undefined || v === '') return undefined;
  const syntax = /^[+-]?\d+$/.test(v);
  if (!syntax || BigInt(v) > INT64_MAX || BigInt(v) < -INT64_MAX - 1n) {
    throw kdpError('KDP_BAD_REQUEST', `strconv.ParseInt: parsing ${JSON.stringify(v)}: ` +
      `${syntax ? 'value out of range' : 'invalid syntax'}`);
  }
  return Number(v);
}
