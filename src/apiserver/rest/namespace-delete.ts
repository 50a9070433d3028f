// Deleting a namespace deletes what it contains first (the namespace controller's job upstream,
// done inline here so `kubectl delete ns` finishes without one). Pods go without grace; objects
// held by finalizers are left to their owners.

import { isKdpError } from '../../errors.js';
import type { ApiService } from '../service.js';
import { isReviewResource } from '../resources.js';
import type { RequestContext } from './deps.js';
import { deleteObject } from './delete.js';
import { listObjects, readObject } from './read.js';

export async function deleteNamespaceContents(svc: ApiService, ctx: RequestContext, ns: string):
  Promise<void> {
  const { deps } = svc;
  const nsr = deps.catalog.find('', 'v1', 'namespaces');
  if (!nsr) return;
  await readObject(deps, nsr, undefined, ns);
  for (const r of deps.catalog.all) {
    if (!r.namespaced || isReviewResource(r)) continue;
    const list = await listObjects(deps, r, ns, {});
    for (const o of list.items) {
      try {
        await deleteObject(deps, ctx, r, ns, o.metadata.name!, { gracePeriodSeconds: 0 });
      } catch (e) {
        if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
      }
    }
  }
}
