// DELETE semantics (registry/generic/registry/store.go): preconditions, graceful pod deletion
// (the object stays with deletionTimestamp until the kubelet confirms with grace 0, unless the
// pod was never scheduled), finalizers, and propagationPolicy recorded as the `orphan` /
// `foregroundDeletion` finalizers for the garbage collector.

import { isKdpError } from '../../errors.js';
import type { DeleteOptions, KubeObject } from '../../client/types.js';
import type { ServedResource } from '../resource-types.js';
import { runAdmission } from './admission.js';
import type { RequestContext, ServiceDeps } from './deps.js';
import { conflict, conflictBackoff, CONFLICT_RETRIES, notFound } from './errors.js';
import { deleteNow } from './finalize.js';
import { objectKey } from './keys.js';
import { timestamp } from './prepare.js';
import { readObject } from './read.js';
import { guaranteedUpdate } from './write.js';

export interface DeleteOutcome {
  readonly obj: KubeObject;
  /** False when the object is still there (terminating). */
  readonly gone: boolean;
}

function isPod(r: ServedResource): boolean {
  return r.group === '' && r.resource === 'pods';
}

/** 409 when the delete's preconditions (uid, resourceVersion) do not hold for `o`. */
export function checkPreconditions(r: ServedResource, o: KubeObject, opts: DeleteOptions): void {
  const p = opts.preconditions;
  if (p?.uid && p.uid !== o.metadata.uid) {
    throw conflict(r, o.metadata.name!, `Precondition failed: UID in precondition: ${p.uid}, ` +
      `UID in object meta: ${o.metadata.uid}`);
  }
  if (p?.resourceVersion && p.resourceVersion !== o.metadata.resourceVersion) {
    throw conflict(r, o.metadata.name!, `Precondition failed: ResourceVersion in precondition: ` +
      `${p.resourceVersion}, ResourceVersion in object meta: ${o.metadata.resourceVersion}`);
  }
}

/** Grace period for this delete; 0 means remove now. Only pods are graceful. */
function gracePeriod(r: ServedResource, o: KubeObject, opts: DeleteOptions): number {
  if (!isPod(r)) return 0;
  const spec = (o.spec ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
  if (!spec.nodeName) return 0;
  const phase = (o.status as { phase?: string } | undefined)?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return 0;
  const g = opts.gracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30;
  return Math.max(0, g);
}

function finalizerFor(policy: DeleteOptions['propagationPolicy']): string | undefined {
  if (policy === 'Orphan') return 'orphan';
  if (policy === 'Foreground') return 'foregroundDeletion';
  return undefined;
}

export async function deleteObject(
  deps: ServiceDeps, ctx: RequestContext, r: ServedResource, namespace: string | undefined,
  name: string, opts: DeleteOptions, attempt = 0,
): Promise<DeleteOutcome> {
  const { obj: current, kv } = await readObject(deps, r, namespace, name);
  checkPreconditions(r, current, opts);
  const grace = gracePeriod(r, current, opts);
  const extraFinalizer = finalizerFor(opts.propagationPolicy);
  const finalizers = current.metadata.finalizers ?? [];
  const keep = grace > 0 || finalizers.length > 0 || !!extraFinalizer;
  const adm = runAdmission(deps.admission, {
    operation: 'DELETE', group: r.group, version: r.version, resource: r.resource, namespace,
    name, oldObject: current, user: ctx.user, dryRun: !!opts.dryRun,
  });
  await adm.admit();
  await adm.validate();
  if (opts.dryRun) return { obj: current, gone: !keep };
  if (!keep) {
    try {
      const gone = await deleteNow(deps, objectKey(r, namespace, name), kv.modRevision);
      await adm.committed();
      return { obj: gone, gone: true };
    } catch (e) {
      if (isKdpError(e, 'KDP_NOT_FOUND')) throw notFound(r, name);
      if (isKdpError(e, 'KDP_CONFLICT') && attempt < CONFLICT_RETRIES) {
        await conflictBackoff(deps.store, objectKey(r, namespace, name), attempt);
        return deleteObject(deps, ctx, r, namespace, name, opts, attempt + 1);
      }
      if (isKdpError(e, 'KDP_CONFLICT')) throw conflict(r, name);
      throw e;
    }
  }
  const out = await guaranteedUpdate(deps, { ...ctx }, r, namespace, name, (o) => {
    const m = o.metadata;
    const now = deps.now();
    if (!m.deletionTimestamp) {
      m.deletionTimestamp = timestamp(new Date(now.getTime() + grace * 1000));
      m.deletionGracePeriodSeconds = grace;
    } else if (grace < (m.deletionGracePeriodSeconds ?? 0)) {
      m.deletionTimestamp = timestamp(new Date(now.getTime() + grace * 1000));
      m.deletionGracePeriodSeconds = grace;
    }
    if (extraFinalizer && !(m.finalizers ?? []).includes(extraFinalizer)) {
      m.finalizers = [...(m.finalizers ?? []), extraFinalizer];
    }
    delete m.resourceVersion;
    return o;
  }, { deleting: true });
  await adm.committed();
  return { obj: out.obj, gone: out.deleted };
}
