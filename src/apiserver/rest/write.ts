// create and update through the full pipeline: admission (mutating) → defaulting →
// validation → validating admission → storage. Updates are read-modify-write with optimistic
// concurrency and a few retries when the mutation is not pinned to a resourceVersion (patches).

import { isKdpError } from '../../errors.js';
import type { KubeObject } from '../../client/types.js';
import type { KeyValue } from '../../store/types.js';
import type { AdmissionOperation } from '../pipeline-types.js';
import type { ServedResource } from '../resource-types.js';
import { runAdmission } from './admission.js';
import { clone, encodeObject, forgetEncoding, servedJson, withEncoding } from './codec.js';
import type { RequestContext, ServiceDeps } from './deps.js';
import {
  alreadyExists, badRequest, conflict, conflictBackoff, CONFLICT_RETRIES, invalid, notFound,
} from './errors.js';
import { objectKey } from './keys.js';
import { prepareForCreate, prepareForUpdate, unchanged } from './prepare.js';
import { csrPrepareForCreate, isCsrResource } from './csr-strategy.js';
import { readObject } from './read.js';
import { deleteNow } from './finalize.js';
import { recordManager } from './managed-fields.js';
import { isNamespaces, keepSpecFinalizers, specFinalizers } from './namespace-spec.js';

export interface WriteCtx extends RequestContext {
  readonly dryRun?: boolean;
  readonly fieldManager?: string;
  readonly subresource?: string;
}

/**
 * Defaulting walks the object's structure; a body of the wrong shape (a string where a list
 * belongs) makes it throw. Upstream rejects such bodies while decoding, with a 400.
 */
function applyDefaultsOrReject(deps: ServiceDeps, r: ServedResource, obj: KubeObject,
  onCreate: boolean): void {
  try {
    deps.rules.applyDefaults(r, obj, onCreate);
  } catch (e) {
    if (isKdpError(e)) throw e;
    throw badRequest(`${r.kind} in version "${r.version}" cannot be handled as a ${r.kind}: ` +
      `${(e as Error).message}`);
  }
}

async function admitDefaultValidate(
  deps: ServiceDeps, ctx: WriteCtx, r: ServedResource, op: AdmissionOperation,
  obj: KubeObject, old?: KubeObject,
) {
  const adm = runAdmission(deps.admission, {
    operation: op, group: r.group, version: r.version, resource: r.resource,
    subresource: ctx.subresource, namespace: obj.metadata.namespace, name: obj.metadata.name,
    object: obj, oldObject: old, user: ctx.user, dryRun: !!ctx.dryRun,
  });
  try {
    applyDefaultsOrReject(deps, r, obj, op === 'CREATE');
    await adm.admit();
    applyDefaultsOrReject(deps, r, obj, op === 'CREATE');
    // A binding writes spec.nodeName directly, as upstream's binding storage does (no pod
    // update validation: nodeName is otherwise immutable).
    const causes = ctx.subresource === 'binding' ? [] :
      deps.rules.validate(r, obj, old, ctx.subresource);
    if (causes.length) throw invalid(r, obj.metadata.name ?? '', causes);
    await adm.validate();
  } catch (e) {
    await adm.aborted();
    if (isKdpError(e)) throw e;
    // Validation and admission also walk the body; a malformed shape is the client's error.
    throw badRequest(`${r.kind} in version "${r.version}" cannot be handled as a ${r.kind}: ` +
      `${(e as Error).message}`);
  }
  return adm;
}

export async function createObject(
  deps: ServiceDeps, ctx: WriteCtx, r: ServedResource, obj: KubeObject,
): Promise<KubeObject> {
  forgetEncoding(obj);
  prepareForCreate(r, obj, deps.now(), deps.newUid());
  if (isCsrResource(r)) csrPrepareForCreate(obj, ctx.user);
  if (!obj.metadata.name) {
    throw invalid(r, '', [{ field: 'metadata.name', reason: 'FieldValueRequired',
      message: 'Required value: name or generateName is required' }]);
  }
  recordManager(obj, undefined, ctx.fieldManager, 'Update', deps.now(), ctx.subresource);
  const adm = await admitDefaultValidate(deps, ctx, r, 'CREATE', obj);
  if (ctx.dryRun) { await adm.aborted(); return obj; }
  let kv: KeyValue;
  const stored = encodeObject(obj);
  try {
    const key = objectKey(r, obj.metadata.namespace, obj.metadata.name);
    kv = await deps.store.create(key, stored);
  } catch (e) {
    await adm.aborted();
    if (isKdpError(e, 'KDP_ALREADY_EXISTS')) throw alreadyExists(r, obj.metadata.name);
    throw e;
  }
  await adm.committed();
  const rv = String(kv.modRevision);
  obj.metadata.resourceVersion = rv;
  return withEncoding(obj, servedJson(stored, obj, rv));
}

/** A mutation of the current object; may throw to abort. Returns the desired next object. */
export type Mutation = (current: KubeObject) => KubeObject | Promise<KubeObject>;

export interface UpdateOptions {
  /** The write marks the object deleted: deletionTimestamp comes from the mutation. */
  readonly deleting?: boolean;
  /** Runs on the object after server-owned fields are carried over (e.g. status, spec). */
  readonly finish?: (next: KubeObject) => void;
}

export interface UpdateOutcome {
  readonly obj: KubeObject;
  /** True when the write was a finalization that removed the object. */
  readonly deleted: boolean;
}

/**
 * Read-modify-write. When the mutation returns an object carrying a resourceVersion that differs
 * from the current one, answers 409; otherwise retries store conflicts (CONFLICT_RETRIES).
 */
export async function guaranteedUpdate(
  deps: ServiceDeps, ctx: WriteCtx, r: ServedResource, namespace: string | undefined, name: string,
  mutate: Mutation, opts: UpdateOptions = {},
): Promise<UpdateOutcome> {
  for (let attempt = 0; ; attempt++) {
    const { obj: current, kv } = await readObject(deps, r, namespace, name);
    const desired = await mutate(clone(current));
    const pinned = desired.metadata?.resourceVersion;
    if (pinned && pinned !== current.metadata.resourceVersion) throw conflict(r, name);
    try {
      return await commitUpdate(deps, ctx, r, current, kv, desired, opts);
    } catch (e) {
      if (!isKdpError(e, 'KDP_CONFLICT') || e.details.causes) throw e;
      if (pinned || attempt >= CONFLICT_RETRIES) throw conflict(r, name);
      await conflictBackoff(deps.store, objectKey(r, namespace, name), attempt);
    }
  }
}

async function commitUpdate(
  deps: ServiceDeps, ctx: WriteCtx, r: ServedResource, current: KubeObject, kv: KeyValue,
  desired: KubeObject, opts: UpdateOptions,
): Promise<UpdateOutcome> {
  forgetEncoding(desired);
  const next = prepareForUpdate(r, desired, current, ctx.subresource, !!opts.deleting);
  const ns = isNamespaces(r);
  // A namespace's spec.finalizers change only through `namespaces/finalize` (upstream).
  if (ns && ctx.subresource !== 'finalize') keepSpecFinalizers(next, current);
  opts.finish?.(next);
  recordManager(next, current, ctx.fieldManager, 'Update', deps.now(), ctx.subresource);
  const adm = await admitDefaultValidate(deps, ctx, r, 'UPDATE', next, current);
  next.metadata.resourceVersion = current.metadata.resourceVersion;
  const finalizing = !!next.metadata.deletionTimestamp && !next.metadata.finalizers?.length &&
    !isGracefulPending(r, next) && !(ns && specFinalizers(next).length > 0);
  if (ctx.dryRun) { await adm.aborted(); return { obj: next, deleted: false }; }
  if (!finalizing && unchanged(next, current)) {
    await adm.aborted();
    return { obj: current, deleted: false };
  }
  const key = objectKey(r, current.metadata.namespace, current.metadata.name!);
  try {
    if (finalizing) {
      const gone = await deleteNow(deps, key, kv.modRevision);
      await adm.committed();
      return { obj: gone, deleted: true };
    }
    const stored = encodeObject(next);
    const out = await deps.store.update(key, stored, kv.modRevision);
    await adm.committed();
    const rv = String(out.modRevision);
    next.metadata.resourceVersion = rv;
    return { obj: withEncoding(next, servedJson(stored, next, rv)), deleted: false };
  } catch (e) {
    await adm.aborted();
    if (isKdpError(e, 'KDP_NOT_FOUND')) throw notFound(r, current.metadata.name!);
    throw e;
  }
}

/** A pod with a grace period still running waits for the kubelet, even without finalizers. */
function isGracefulPending(r: ServedResource, o: KubeObject): boolean {
  return r.group === '' && r.resource === 'pods' &&
    (o.metadata.deletionGracePeriodSeconds ?? 0) > 0;
}
