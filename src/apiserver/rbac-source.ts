// The RBAC authorizer's source over the API server's own storage, with a generation that a
// store watch on the four RBAC prefixes bumps: the authorizer keeps its resolved rule index
// until a Role, ClusterRole or binding changes (upstream's authorizer reads informer caches).
// The embedded store delivers watch events before the write's caller resumes, so a binding
// takes effect for the next request; if the watch ends, caching stops (every read is fresh).

import type { KubeObject } from '../client/types.js';
import type { StoreBackend, Watcher } from '../store/types.js';
import type { RbacResource, RbacSource } from './authz/index.js';
import type { ResourceCatalog } from './resource-types.js';
import type { ServiceDeps } from './rest/deps.js';
import { resourcePrefix } from './rest/keys.js';
import { listObjects } from './rest/read.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const RESOURCES: readonly RbacResource[] = ['roles', 'rolebindings', 'clusterroles',
  'clusterrolebindings'];

export interface StoreRbacSource extends RbacSource {
  /** Stops the watches (the store closes them too). */
  stop(): void;
}

export function buildStoreRbacSource(
  store: StoreBackend, catalog: ResourceCatalog, getDeps: () => ServiceDeps | undefined,
): StoreRbacSource {
  let gen = 0;
  let live = true;
  const watchers: Watcher[] = [];
  for (const res of RESOURCES) {
    const r = catalog.find(RBAC_GROUP, 'v1', res);
    if (!r) continue;
    watchers.push(store.watch(resourcePrefix(r), store.currentRevision(), {
      onEvents: () => { gen++; },
      onClose: () => { live = false; },
    }));
  }
  return {
    generation: () => (live ? gen : ++gen),
    async list(resource: RbacResource, namespace?: string): Promise<KubeObject[]> {
      const r = catalog.find(RBAC_GROUP, 'v1', resource);
      const deps = getDeps();
      if (!r || !deps) return [];
      return (await listObjects(deps, r, namespace, {})).items;
    },
    stop() {
      live = false;
      for (const w of watchers) w.stop();
    },
  };
}
