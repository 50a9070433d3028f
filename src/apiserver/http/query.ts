// Query parameters as upstream reads them (repeated parameters: first value wins).

import { kdpError } from '../../errors.js';

export type Query = Record<string, string | string[] | undefined>;

export function q(query: Query, name: string): string | undefined {
  const v = query[name];
  return Array.isArray(v) ? v[0] : v;
}

export function qBool(query: Query, name: string): boolean {
  const v = q(query, name);
  return v === 'true' || v === '1';
}

export function qInt(query: Query, name: string): number | undefined {
  const v = q(query, name);
  if (v === undefined || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) {
    throw kdpError('KDP_BAD_REQUEST', `invalid value for ${name}: ${JSON.stringify(v)}`);
  }
  return Number(v);
}

/** `dryRun=All` → true; absent → false; anything else → 400. */
export function qDryRun(query: Query): boolean {
  const raw = query.dryRun;
  const vals = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  for (const v of vals) {
    if (v !== 'All') throw kdpError('KDP_BAD_REQUEST', `Invalid dry run value: ${v}`);
  }
  return vals.length > 0;
}
