// Strategic merge patch (apimachinery/pkg/util/strategicpatch) for built-in kinds: JSON merge,
// except that lists with a patchMergeKey merge element by element, primitive set-lists union,
// and the directives `$patch` (replace/delete/merge), `$retainKeys`, `$setElementOrder/<list>`
// and `$deleteFromPrimitiveList/<list>` are honoured. Unknown lists are replaced. A malformed
// directive answers 400 with upstream's message (mergepatch errors); other `$` keys are ignored
// (upstream keeps them as fields that typed decoding drops). Keys are request data: read and
// written as own properties (own.ts).
// With the kind's patch metadata (from its upstream schema, `SmpOptions.meta`), a list merges
// only where the schema says `x-kubernetes-patch-strategy: merge`, by its
// `x-kubernetes-patch-merge-key`, exactly as kubectl computed the patch; without it (a kind
// with no schema) merge keys are guessed by field name (merge-keys.ts).

import { isDeepStrictEqual } from 'node:util';
import { kdpError } from '../../errors.js';
import type { PatchMeta } from '../openapi/patch-meta.js';
import { isSetList, mergeKeyFor } from './merge-keys.js';
import { getOwn, setOwn } from './own.js';

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
    setOwn(out, k, strip(c));
  }
  return out;
}

export interface SmpOptions {
  /** Server-side apply: a null in the patch is a value to keep absent, not a deletion marker. */
  readonly ignoreNull?: boolean;
  /** The patched kind's metadata from its schema; field-name guesses without it. */
  readonly meta?: PatchMeta;
}

export function applyStrategicMergePatch(original: unknown, patch: unknown, opts: SmpOptions = {}):
  unknown {
  if (!isObj(patch)) throw kdpError('KDP_BAD_REQUEST', 'strategic merge patch must be an object');
  return mergeMap(isObj(original) ? original : {}, patch, opts, opts.meta);
}

function bad(msg: string) {
  return kdpError('KDP_BAD_REQUEST', msg);
}

/** Go's %v of a decoded JSON value (maps with sorted keys), for upstream's messages. */
function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Obj;
    return `map[${Object.keys(o).sort().map((k) => `${k}:${goFormat(o[k])}`).join(' ')}]`;
  }
  return String(v);
}

function badPatchType(directive: unknown, m: Obj) {
  return bad(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(m)}`);
}

/** `$retainKeys` must be a list naming every field the patch sets (applyRetainKeysDirective). */
function checkRetainKeys(patch: Obj): unknown[] | undefined {
  if (!Object.hasOwn(patch, '$retainKeys')) return undefined;
  const retain = patch.$retainKeys;
  if (!Array.isArray(retain)) throw bad('invalid patch format of retainKeys');
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k === '$retainKeys' || k.startsWith(DEL_PRIM) || k.startsWith(ORDER)) {
      continue;
    }
    if (!retain.includes(k)) throw bad('invalid patch format of retainKeys');
  }
  return retain;
}

function mergeMap(orig: Obj, patch: Obj, opts: SmpOptions, meta: PatchMeta | undefined):
  Obj | undefined {
  if (Object.hasOwn(patch, '$patch')) {
    const directive = patch.$patch;
    if (directive === 'delete') return undefined;
    if (directive === 'replace') return strip(patch) as Obj;
    throw badPatchType(directive, patch);
  }
  const retain = checkRetainKeys(patch);
  const out: Obj = { ...orig };
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith(DEL_PRIM) && !Array.isArray(v)) {
      throw bad('invalid patch format of primitive list');
    }
    if (k.startsWith(ORDER) && !Array.isArray(v)) {
      throw bad('invalid patch format of setElementOrder list');
    }
    if (k.startsWith('$')) continue;
    if (v === null) { if (!opts.ignoreNull) delete out[k]; continue; }
    const cur = getOwn(out, k);
    if (isObj(v)) {
      const merged = mergeMap(isObj(cur) ? cur : {}, v, opts, meta?.field(k));
      if (merged === undefined) delete out[k]; else setOwn(out, k, merged);
    } else if (Array.isArray(v)) {
      setOwn(out, k, mergeList(k, Array.isArray(cur) ? cur : [], v, opts, meta?.field(k)));
    } else {
      setOwn(out, k, v);
    }
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith(DEL_PRIM) && Array.isArray(v)) {
      const f = k.slice(DEL_PRIM.length);
      const cur = getOwn(out, f);
      if (Array.isArray(cur)) setOwn(out, f, cur.filter((x) => !v.includes(x)));
    }
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith(ORDER) && Array.isArray(v)) {
      const f = k.slice(ORDER.length);
      const cur = getOwn(out, f);
      if (Array.isArray(cur)) setOwn(out, f, reorder(f, cur, v, meta?.field(f)));
    }
  }
  if (retain) {
    for (const k of Object.keys(out)) if (!retain.includes(k)) delete out[k];
  }
  return out;
}

/** `$patch` in the elements of a list merged by `key` (mergeSliceWithSpecialElements). */
function checkListDirectives(patch: unknown[], key: string): void {
  for (const e of patch) {
    if (!isObj(e) || !Object.hasOwn(e, '$patch')) continue;
    const d = e.$patch;
    if (d === 'replace') continue;
    if (d === 'delete') {
      if (e[key] === undefined) {
        throw bad(`map: ${goFormat(e)} does not contain declared merge key: ${key}`);
      }
      continue;
    }
    if (d === 'merge') throw bad('merging lists cannot yet be specified in the patch');
    throw badPatchType(d, e);
  }
}

/** Whether a list merges, and by which key: from the schema, else guessed by field name. */
function listStrategy(field: string, orig: unknown[], patch: unknown[],
  meta: PatchMeta | undefined): { set: boolean; key?: string } {
  if (!meta) {
    return { set: isSetList(field) && patch.every((e) => !isObj(e)),
      key: mergeKeyFor(field, orig, patch) };
  }
  if (!meta.strategy.split(',').includes('merge')) return { set: false };
  const maps = [...orig, ...patch].some(isObj);
  return maps ? { set: false, key: meta.mergeKey } : { set: true };
}

function mergeList(field: string, orig: unknown[], patch: unknown[], opts: SmpOptions,
  meta: PatchMeta | undefined): unknown[] {
  if (patch.some((e) => isObj(e) && e.$patch === 'replace')) {
    return strip(patch.filter((e) => !(isObj(e) && e.$patch === 'replace'))) as unknown[];
  }
  const how = listStrategy(field, orig, patch, meta);
  if (how.set) {
    const out = [...orig];
    for (const e of patch) if (!out.some((x) => isDeepStrictEqual(x, e))) out.push(e);
    return out;
  }
  const key = how.key;
  if (!key) return strip(patch) as unknown[];
  checkListDirectives(patch, key);
  const out = [...orig];
  for (const el of patch) {
    if (!isObj(el)) continue;
    const i = out.findIndex((o) => isObj(o) && isDeepStrictEqual(o[key], el[key]));
    if (el.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
      continue;
    }
    if (i >= 0) {
      const merged = mergeMap(out[i] as Obj, el, opts, meta?.items);
      if (merged === undefined) out.splice(i, 1); else out[i] = merged;
    } else {
      out.push(strip(el));
    }
  }
  return out;
}

/** `$setElementOrder`: listed elements first in the given order, the rest after. */
function reorder(field: string, list: unknown[], order: unknown[], meta: PatchMeta | undefined):
  unknown[] {
  const key = meta ? meta.mergeKey : mergeKeyFor(field, list);
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
