// Server-side apply (structured-merge-diff, simplified): the applied configuration is merged
// into the live object like a strategic merge patch; fields another manager owns with a
// different value are conflicts (409 unless force, which takes them over); fields this manager
// applied before and no longer applies are removed when nobody else owns them.

import { isDeepStrictEqual } from 'node:util';
import { kdpError } from '../../errors.js';
import type { Cause } from '../../errors.js';
import type { KubeObject } from '../../client/types.js';
import type { ManagedFieldsEntry } from '../../api/types/meta.js';
import type { FieldSet } from '../rest/managed-fields.js';
import {
  elementKeyOf, fieldsOf, leaves, ownsPath, pathString, removePath, setEntries, valueAt,
} from '../rest/managed-fields.js';
import { getOwn } from './own.js';
import { timestamp } from '../rest/prepare.js';
import { applyStrategicMergePatch } from './strategic.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/** Deletes the field at a field-set path from an object (in place). */
function removeAt(obj: unknown, path: readonly string[]): void {
  const parent = valueAt(obj, path.slice(0, -1));
  const last = path.at(-1)!;
  if (last.startsWith('f:') && isObj(parent)) delete parent[last.slice(2)];
  else if (last.startsWith('k:') && Array.isArray(parent)) {
    const kv = elementKeyOf(last);
    if (!kv) return;
    const [k, v] = kv;
    const i = parent.findIndex((e) => isObj(e) && getOwn(e, k) === v);
    if (i >= 0) parent.splice(i, 1);
  }
}

function conflictError(conflicts: Array<{ e: ManagedFieldsEntry; path: string[] }>) {
  const causes: Cause[] = conflicts.map(({ e, path }) => ({
    reason: 'FieldManagerConflict', field: pathString(path),
    message: `conflict with "${e.manager}"` +
      (e.subresource ? ` with subresource "${e.subresource}"` : '') + ` using ${e.apiVersion}`,
  }));
  const n = conflicts.length;
  let msg: string;
  if (n === 1) msg = `Apply failed with 1 conflict: ${causes[0]!.message}: ${causes[0]!.field}`;
  else {
    const byMgr = new Map<string, string[]>();
    for (const c of causes) byMgr.set(c.message, [...(byMgr.get(c.message) ?? []), c.field]);
    msg = `Apply failed with ${n} conflicts: ` + [...byMgr].map(([m, fs]) =>
      `${m.replace(/^conflict/, 'conflicts')}:\n${fs.map((f) => `- ${f}`).join('\n')}`).join('\n');
  }
  return kdpError('KDP_CONFLICT', msg, { causes });
}

export interface ApplyInput {
  readonly live: KubeObject | undefined;
  readonly applied: KubeObject;
  readonly manager: string;
  readonly force: boolean;
  readonly now: Date;
  readonly subresource?: string;
}

/** The object after applying, with managedFields updated. Throws 409 on conflicts. */
export function serverSideApply(inp: ApplyInput): KubeObject {
  const { live, applied, manager, force } = inp;
  const withStatus = inp.subresource === 'status';
  const newSet = fieldsOf(applied, withStatus);
  const entries = (live?.metadata.managedFields ?? []) as ManagedFieldsEntry[];
  const isMine = (e: ManagedFieldsEntry) => e.manager === manager && e.operation === 'Apply' &&
    (e.subresource ?? '') === (inp.subresource ?? '');
  const others = entries.filter((e) => !isMine(e)).map((e) => ({ ...e,
    fieldsV1: structuredClone((e.fieldsV1 ?? {}) as FieldSet) }));
  const mineOld = entries.find(isMine);
  const conflicts: Array<{ e: ManagedFieldsEntry; path: string[] }> = [];
  for (const p of leaves(newSet)) {
    for (const e of others) {
      if (!ownsPath(e.fieldsV1 as FieldSet, p)) continue;
      if (isDeepStrictEqual(valueAt(live, p), valueAt(applied, p))) continue;
      conflicts.push({ e, path: p });
    }
  }
  if (conflicts.length && !force) throw conflictError(conflicts);
  for (const { e, path } of conflicts) removePath(e.fieldsV1 as FieldSet, path);
  const base = structuredClone(live ?? { metadata: {} }) as KubeObject;
  if (mineOld) {
    for (const p of leaves((mineOld.fieldsV1 ?? {}) as FieldSet)) {
      if (valueAt(applied, p) !== undefined) continue;
      if (others.some((e) => ownsPath(e.fieldsV1 as FieldSet, p))) continue;
      removeAt(base, p);
    }
  }
  const { metadata: am, ...rest } = applied;
  const patch = { ...rest, metadata: { ...am, managedFields: undefined } };
  delete patch.metadata.managedFields;
  const out = applyStrategicMergePatch(base, patch, { ignoreNull: true }) as KubeObject;
  const mine: ManagedFieldsEntry = {
    manager, operation: 'Apply', apiVersion: applied.apiVersion, time: timestamp(inp.now),
    fieldsType: 'FieldsV1', fieldsV1: newSet,
  };
  if (inp.subresource) mine.subresource = inp.subresource;
  setEntries(out, [...others, mine]);
  return out;
}
