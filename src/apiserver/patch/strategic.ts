// Strategic merge patch (apimachinery/pkg/util/strategicpatch) for built-in kinds: JSON merge,
// except that lists with a patchMergeKey merge element by element, primitive set-lists union,
// and the directives `$patch` (replace/delete/merge), `$retainKeys`, `$setElementOrder/<list>`
// and `$deleteFromPrimitiveList/<list>` are honoured. Unknown lists are replaced.

import { isDeepStrictEqual } from 'node:util';
import { kdpError } from '../../errors.js';
import { isSetList, mergeKeyFor } from './merge-keys.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

const ORDER = '$setElementOrder/';
const DEL_PRIM = '$deleteFromPrimitiveList/';

/** Removes directive keys from a value that is being inserted as-is. */
function strip(v: unknown): unknown {
  if (Array.isArray(v)) {
    return v.filter((e) => !(isObj(e) && e.$patch === 'delete')).map(strip);
  }
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const [k, c] of Object.entries(v)) {
    if (k.startsWith('$')) continue;
    if (c === null) continue;
    out[k] = strip(c);
  }
  return out;
}

export interface SmpOptions {
  /** Server-side apply: a null in the patch is a value to keep absent, not a deletion marker. */
  readonly ignoreNull?: boolean;
}

export function applyStrategicMergePatch(original: unknown, patch: unknown, opts: SmpOptions = {}):
  unknown {
  if (!isObj(patch)) throw kdpError('KDP_BAD_REQUEST', 'strategic merge patch must be an object');
  return mergeMap(isObj(original) ? original : {}, patch, opts);
}

function mergeMap(orig: Obj, patch: Obj, opts: SmpOptions): Obj | undefined {
  const directive = patch.$patch;
  if (directive === 'delete') return undefined;
  if (directive === 'replace') return strip(patch) as Obj;
  const out: Obj = { ...orig };
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$')) continue;
    if (v === null) { if (!opts.ignoreNull) delete out[k]; continue; }
    if (isObj(v)) {
      const merged = mergeMap(isObj(out[k]) ? (out[k] as Obj) : {}, v, opts);
      if (merged === undefined) delete out[k]; else out[k] = merged;
    } else if (Array.isArray(v)) {
      out[k] = mergeList(k, Array.isArray(out[k]) ? (out[k] as unknown[]) : [], v, opts);
    } else {
      out[k] = v;
    }
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith(DEL_PRIM) && Array.isArray(v)) {
      const f = k.slice(DEL_PRIM.length);
      if (Array.isArray(out[f])) out[f] = (out[f] as unknown[]).filter((x) => !v.includes(x));
    }
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith(ORDER) && Array.isArray(v)) {
      const f = k.slice(ORDER.length);
      if (Array.isArray(out[f])) out[f] = reorder(f, out[f] as unknown[], v);
    }
  }
  const retain = patch.$retainKeys;
  if (Array.isArray(retain)) {
    for (const k of Object.keys(out)) if (!retain.includes(k)) delete out[k];
  }
  return out;
}

function mergeList(field: string, orig: unknown[], patch: unknown[], opts: SmpOptions): unknown[] {
  if (patch.some((e) => isObj(e) && e.$patch === 'replace')) {
    return strip(patch.filter((e) => !(isObj(e) && e.$patch === 'replace'))) as unknown[];
  }
  if (isSetList(field) && patch.every((e) => !isObj(e))) {
    const out = [...orig];
    for (const e of patch) if (!out.some((x) => isDeepStrictEqual(x, e))) out.push(e);
    return out;
  }
  const key = mergeKeyFor(field, orig, patch);
  if (!key) return strip(patch) as unknown[];
  const out = [...orig];
  for (const el of patch) {
    if (!isObj(el)) continue;
    const i = out.findIndex((o) => isObj(o) && isDeepStrictEqual(o[key], el[key]));
    if (el.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
      continue;
    }
    if (i >= 0) {
      const merged = mergeMap(out[i] as Obj, el, opts);
      if (merged === undefined) out.splice(i, 1); else out[i] = merged;
    } else {
      out.push(strip(el));
    }
  }
  return out;
}

/** `$setElementOrder`: listed elements first in the given order, the rest after. */
function reorder(field: string, list: unknown[], order: unknown[]): unknown[] {
  const key = mergeKeyFor(field, list);
  const pos = (e: unknown) => order.findIndex((o) =>
    key && isObj(o) && isObj(e) ? isDeepStrictEqual(o[key], e[key]) : isDeepStrictEqual(o, e));
  const withPos = list.map((e, i) => ({ e, p: pos(e), i }));
  withPos.sort((a, b) => {
    const pa = a.p < 0 ? Infinity : a.p;
    const pb = b.p < 0 ? Infinity : b.p;
    return pa === pb ? a.i - b.i : pa - pb;
  });
  return withPos.map((x) => x.e);
}
