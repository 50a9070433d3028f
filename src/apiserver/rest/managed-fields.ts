// metadata.managedFields: which manager set which fields. Field sets use the fieldsV1 shape
// (`f:<field>`, `k:{"key":value}` for keyed list items, `{}` leaves); lists without a merge key
// and primitive lists are owned whole.

import type { KubeObject } from '../../client/types.js';
import type { ManagedFieldsEntry } from '../../api/types/meta.js';
import { mergeKeyFor } from '../patch/merge-keys.js';
import { getOwn, setOwn } from '../patch/own.js';
import { timestamp } from './prepare.js';

export type FieldSet = { [k: string]: FieldSet };

// Field-set segments come from requests (a PUT may send metadata.managedFields): every walk
// reads own members only and writes own data properties (`f:__proto__` stays a field name).
function child(fs: FieldSet | undefined, seg: string): FieldSet | undefined {
  return fs ? (getOwn(fs, seg) as FieldSet | undefined) : undefined;
}

const SERVER_META = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation',
  'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields',
  'selfLink', 'generateName']);

function isObj(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

export function elementKey(key: string, el: Record<string, unknown>): string {
  const v = el[key];
  if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return 'k:{}';
  return `k:{${JSON.stringify(key)}:${JSON.stringify(v)}}`;
}

/**
 * `f:<name>` keys, memoised (a pure, bounded table): a fresh concatenation would be hashed
 * into V8's string table again for every field of every write.
 */
const FIELD_KEYS = new Map<string, string>();

function fieldKey(name: string): string {
  let k = FIELD_KEYS.get(name);
  if (k === undefined) {
    k = `f:${name}`;
    if (FIELD_KEYS.size < 16_384) FIELD_KEYS.set(name, k);
  }
  return k;
}

/** Adds the fields of object `v` to `out`. `dots`: mark list items with `.` as upstream. */
function fill(out: FieldSet, v: Record<string, unknown>, dots: boolean): FieldSet {
  // An undefined member (objects built in-process) is absent, as it would be in JSON.
  for (const k in v) {
    const c = v[k];
    if (c !== undefined) out[fieldKey(k)] = fieldsOfValue(k, c, dots);
  }
  return out;
}

function fieldsOfValue(field: string, v: unknown, dots: boolean): FieldSet {
  if (isObj(v)) return fill({}, v, dots);
  if (Array.isArray(v)) {
    const key = mergeKeyFor(field, v);
    if (!key || !v.length) return {};
    const out: FieldSet = {};
    for (const el of v) {
      if (!isObj(el)) return {};
      out[elementKey(key, el)] = fill(dots ? { '.': {} } : {}, el, dots);
    }
    return out;
  }
  return {};
}

/**
 * Every field the object sets (server-owned metadata, kind and apiVersion excluded). Without
 * `dots`, list items carry no `.` marker: the set an Update creating the object owns.
 */
export function fieldsOf(obj: KubeObject, withStatus = false, dots = true): FieldSet {
  const out: FieldSet = {};
  // for-in, like fill(): objects here are plain (JSON or literals), no inherited members.
  for (const k in obj) {
    const v = (obj as Record<string, unknown>)[k];
    if (k === 'kind' || k === 'apiVersion' || (k === 'status' && !withStatus)) continue;
    if (v === undefined) continue;
    if (k === 'metadata' && isObj(v)) {
      const m: FieldSet = {};
      let any = false;
      for (const mk in v) {
        const mv = v[mk];
        if (SERVER_META.has(mk) || mv === undefined) continue;
        m[fieldKey(mk)] = fieldsOfValue(mk, mv, dots);
        any = true;
      }
      if (any) out['f:metadata'] = m;
      continue;
    }
    out[fieldKey(k)] = fieldsOfValue(k, v, dots);
  }
  return out;
}

/** Leaf paths of a field set, as arrays of segments. */
export function leaves(fs: FieldSet, prefix: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [k, c] of Object.entries(fs)) {
    if (k === '.') continue;
    const kids = c && typeof c === 'object' ? Object.keys(c).filter((x) => x !== '.') : [];
    if (!kids.length) out.push([...prefix, k]); else out.push(...leaves(c, [...prefix, k]));
  }
  return out;
}

export function hasPath(fs: FieldSet, path: readonly string[]): boolean {
  let cur: FieldSet | undefined = fs;
  for (const seg of path) {
    cur = child(cur, seg);
    if (!cur) return false;
  }
  return true;
}

/** True when `fs` owns `path` or any ancestor of it as a leaf (an atomic owner). */
export function ownsPath(fs: FieldSet, path: readonly string[]): boolean {
  let cur: FieldSet | undefined = fs;
  for (const seg of path) {
    if (!cur) return false;
    if (cur !== fs && !Object.keys(cur).some((k) => k !== '.')) return true;
    cur = child(cur, seg);
  }
  return !!cur;
}

export function addPath(fs: FieldSet, path: readonly string[]): void {
  let cur = fs;
  for (const seg of path) {
    let next = child(cur, seg);
    if (!next || typeof next !== 'object') { next = {}; setOwn(cur, seg, next); }
    cur = next;
  }
}

export function removePath(fs: FieldSet, path: readonly string[]): void {
  const walk = (node: FieldSet, i: number): boolean => {
    const c = child(node, path[i]!);
    if (!c || typeof c !== 'object') return false;
    if (i === path.length - 1) delete node[path[i]!];
    else if (walk(c, i + 1) && !Object.keys(c).some((k) => k !== '.')) {
      delete node[path[i]!];
    }
    return true;
  };
  if (path.length) walk(fs, 0);
}

/** Value at a field-set path in an object (undefined when absent). */
export function valueAt(obj: unknown, path: readonly string[]): unknown {
  let cur: unknown = obj;
  for (const seg of path) {
    if (seg.startsWith('f:')) {
      cur = isObj(cur) ? getOwn(cur, seg.slice(2)) : undefined;
    } else if (seg.startsWith('k:')) {
      const kv = elementKeyOf(seg);
      if (!kv) return undefined;
      const [k, v] = kv;
      cur = Array.isArray(cur) ? cur.find((e) => isObj(e) && getOwn(e, k) === v) : undefined;
    } else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** The key and value a `k:{"key":value}` segment names; undefined when malformed. */
export function elementKeyOf(seg: string): [string, unknown] | undefined {
  try {
    const want = JSON.parse(seg.slice(2)) as unknown;
    const first = isObj(want) ? Object.entries(want)[0] : undefined;
    return first;
  } catch {
    return undefined;
  }
}

/** `.spec.template.spec.containers[name="web"].image`, as upstream prints conflicts. */
export function pathString(path: readonly string[]): string {
  return path.map((seg) => {
    if (seg.startsWith('f:')) return `.${seg.slice(2)}`;
    const kv = elementKeyOf(seg);
    return kv ? `[${kv[0]}=${JSON.stringify(kv[1])}]` : `[${seg}]`;
  }).join('');
}

/** Leaves whose value differs between two objects (added, changed or removed). */
export function changedFields(
  old: KubeObject | undefined, next: KubeObject, status: boolean,
): FieldSet {
  const nf = fieldsOf(next, status);
  if (!old) return nf;
  const of = fieldsOf(old, status);
  const out: FieldSet = {};
  for (const p of leaves(nf)) {
    if (JSON.stringify(valueAt(old, p)) !== JSON.stringify(valueAt(next, p))) addPath(out, p);
  }
  for (const p of leaves(of)) if (valueAt(next, p) === undefined) addPath(out, p);
  return out;
}

function entries(o: KubeObject): ManagedFieldsEntry[] {
  const mf = o.metadata.managedFields;
  return Array.isArray(mf) ? (mf as ManagedFieldsEntry[]) : [];
}

export function setEntries(o: KubeObject, list: ManagedFieldsEntry[]): void {
  const kept = list.filter((e) => e.fieldsV1 && Object.keys(e.fieldsV1 as FieldSet).length);
  if (kept.length) o.metadata.managedFields = kept; else delete o.metadata.managedFields;
}

/**
 * Records an Update by `manager`: it gains the fields it changed, other managers lose them.
 * Without a manager, managedFields from the old object are carried over unchanged.
 */
export function recordManager(
  next: KubeObject, old: KubeObject | undefined, manager: string | undefined,
  operation: 'Update' | 'Apply', now: Date, subresource?: string,
): void {
  const base = old ? entries(old) : [];
  if (!manager) {
    // As upstream: a request that sends no managedFields keeps the previous ones.
    const sent = next.metadata.managedFields;
    if (!Array.isArray(sent) || !sent.length) {
      if (old) setEntries(next, base.map((e) => ({ ...e })));
      else delete next.metadata.managedFields;
    }
    return;
  }
  // A create: every field of `next` is changed and owned (no per-leaf walk needed).
  const changed = old ? changedFields(old, next, subresource === 'status') :
    fieldsOf(next, subresource === 'status', false);
  const list: ManagedFieldsEntry[] = [];
  let mine: ManagedFieldsEntry | undefined;
  for (const e of base) {
    const fs = structuredClone((e.fieldsV1 ?? {}) as FieldSet);
    const isMine = e.manager === manager && e.operation === operation &&
      (e.subresource ?? '') === (subresource ?? '');
    if (!isMine) for (const p of leaves(changed)) removePath(fs, p);
    const ne = { ...e, fieldsV1: fs };
    if (isMine) mine = ne;
    list.push(ne);
  }
  // Nothing changed: the entries stay as they were, time included, as upstream's
  // ignoreManagedFieldsTimestampsTransformer keeps them, so a no-op write stays a no-op.
  if (!Object.keys(changed).length) { setEntries(next, list); return; }
  if (!mine) {
    mine = { manager, operation, apiVersion: next.apiVersion, time: '', fieldsType: 'FieldsV1',
      fieldsV1: {} };
    if (subresource) mine.subresource = subresource;
    list.push(mine);
  }
  if (!old) {
    mine.fieldsV1 = changed;
  } else {
    for (const p of leaves(changed)) {
      if (valueAt(next, p) !== undefined) addPath(mine.fieldsV1 as FieldSet, p);
    }
  }
  mine.time = timestamp(now);
  setEntries(next, list);
}
