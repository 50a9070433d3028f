// DELETE of a namespace, as upstream's namespace storage (pkg/registry/core/namespace/storage):
// preconditions, then admission (NamespaceLifecycle refuses `default`, `kube-system`,
// `kube-public`), then the first delete only marks the namespace — deletionTimestamp, phase
// Terminating, the `kubernetes` finalizer in spec.finalizers — and answers it. Emptying it is
// the namespace controller's job; it removes the finalizer through `namespaces/finalize`, and
// the update that leaves spec.finalizers empty removes the namespace (see write.ts). Nothing is
// written for a dry run or a refused request.

import type { DeleteOptions, KubeObject } from '../../client/types.js';
import type { ServedResource } from '../resource-types.js';
import { runAdmission } from './admission.js';
import { checkPreconditions, deleteObject } from './delete.js';
import type { RequestContext, ServiceDeps } from './deps.js';
import { timestamp } from './prepare.js';
import { readObject } from './read.js';
import { guaranteedUpdate } from './write.js';
import { ensureNamespaceFinalizer, specFinalizers } from './namespace-spec.js';

/** Marks `o` (in place) as upstream's first delete does. */
function markTerminating(o: KubeObject, now: Date, policy: DeleteOptions['propagationPolicy']):
  KubeObject {
  const m = o.metadata;
  if (!m.deletionTimestamp) m.deletionTimestamp = timestamp(now);
  ensureNamespaceFinalizer(o);
  o.status = { ...((o.status ?? {}) as Record<string, unknown>), phase: 'Terminating' };
  const extra = policy === 'Orphan' ? 'orphan' : policy === 'Foreground' ?
    'foregroundDeletion' : undefined;
  const fins = m.finalizers ?? [];
  if (extra && !fins.includes(extra)) m.finalizers = [...fins, extra];
  return o;
}

export async function deleteNamespace(
  deps: ServiceDeps, ctx: RequestContext, r: ServedResource, name: string, opts: DeleteOptions,
): Promise<KubeObject> {
  const { obj: current } = await readObject(deps, r, undefined, name);
  checkPreconditions(r, current, opts);
  if (current.metadata.deletionTimestamp && specFinalizers(current).length === 0) {
    // Finalized but held by metadata finalizers: the ordinary delete path.
    return (await deleteObject(deps, ctx, r, undefined, name, opts)).obj;
  }
  const adm = runAdmission(deps.admission, {
    operation: 'DELETE', group: r.group, version: r.version, resource: r.resource,
    name, oldObject: current, user: ctx.user, dryRun: !!opts.dryRun,
  });
  await adm.admit();
  await adm.validate();
  if (current.metadata.deletionTimestamp) { await adm.aborted(); return current; }
  if (opts.dryRun) {
    await adm.aborted();
    return markTerminating(current, deps.now(), opts.propagationPolicy);
  }
  const pinned = { uid: current.metadata.uid, rv: opts.preconditions?.resourceVersion };
  const now = deps.now();
  const out = await guaranteedUpdate(deps, { ...ctx }, r, undefined, name, (o) => {
    checkPreconditions(r, o, { preconditions: { uid: pinned.uid, resourceVersion: pinned.rv } });
    const next = markTerminating(o, now, opts.propagationPolicy);
    delete next.metadata.resourceVersion;
    return next;
  }, { deleting: true, finish: (next) => markTerminating(next, now, undefined) });
  await adm.committed();
  return out.obj;
}
