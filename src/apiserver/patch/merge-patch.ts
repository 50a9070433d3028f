// RFC 7386 JSON Merge Patch: objects merge recursively, null deletes, everything else replaces.
// Keys are request data: read and written as own properties (own.ts).

import { getOwn, setOwn } from './own.js';

function isObj(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else setOwn(out, k, applyMergePatch(getOwn(out, k), v));
  }
  return out;
}
