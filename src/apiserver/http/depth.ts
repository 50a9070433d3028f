// Nesting depth of request bodies, bounded where they are decoded, as upstream's JSON decoders
// bound it (Go's encoding/json and sigs.k8s.io/json scanners answer "exceeded max depth").
// Upstream's bound is 10,000 levels; Node's own recursive primitives fail far sooner
// (isDeepStrictEqual at ~1,250 levels, structuredClone at ~1,900, the yaml parser at ~800
// flow levels — and a stack overflow while V8 compiles a regular expression aborts the
// process), so kdp's bound is 512: ample for any built-in kind, and every walker of a decoded
// body (and of what a JSON patch can build from it) stays far from the stack limit.

import { kdpError } from '../../errors.js';

export const MAX_DEPTH = 512;

/**
 * An upper bound of the nesting depth of YAML text, without parsing it: per line, the
 * indentation plus leading `- ` sequence entries, plus the depth of open flow collections
 * (brackets inside quoted scalars do not count). Block scalars may be over-counted; that only
 * refuses text that nests (or looks nested) beyond MAX_DEPTH.
 */
export function yamlTextDepthBound(text: string): number {
  let flow = 0;
  let max = 0;
  let quote = 0;
  let lineStart = true;
  let indent = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) { lineStart = true; indent = 0; continue; }
    if (quote) {
      if (quote === 0x22 && c === 0x5c) i++;
      else if (c === quote) quote = 0;
      continue;
    }
    if (lineStart) {
      if (c === 0x20 || c === 0x2d) { indent++; continue; } // spaces and `-` entries
      lineStart = false;
      if (indent + flow > max) max = indent + flow;
    }
    if (c === 0x22 || c === 0x27) quote = c;
    else if (c === 0x23 && (i === 0 || text.charCodeAt(i - 1) === 0x20)) {
      while (i + 1 < text.length && text.charCodeAt(i + 1) !== 0x0a) i++; // comment
    } else if (c === 0x7b || c === 0x5b) { if (indent + ++flow > max) max = indent + flow; }
    else if (c === 0x7d || c === 0x5d) flow--;
  }
  return max;
}

/**
 * Whether a decoded value nests deeper than `limit`. Recursive, but never more than `limit`
 * frames deep (it stops there), so it is safe on any value.
 */
export function deeperThan(v: unknown, limit: number): boolean {
  if (limit <= 0) return !!v && typeof v === 'object';
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const c = v[i];
      if (c !== null && typeof c === 'object' && deeperThan(c, limit - 1)) return true;
    }
    return false;
  }
  if (v === null || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  for (const k in o) {
    const c = o[k];
    if (c !== null && typeof c === 'object' && deeperThan(c, limit - 1)) return true;
  }
  return false;
}

export function tooDeep(message: string): Error {
  return kdpError('KDP_BAD_REQUEST', message);
}
