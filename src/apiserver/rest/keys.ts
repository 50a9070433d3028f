// Store key layout, as etcd keys in upstream: `/registry/<resource>[.<group>]/<ns>/<name>` for
// namespaced objects and `/registry/<resource>[.<group>]/<name>` for cluster-scoped ones.

import type { ServedResource } from '../resource-types.js';
import { qualifiedResource } from '../resource-types.js';

export function resourcePrefix(r: ServedResource): string {
  return `/registry/${qualifiedResource(r)}/`;
}

/** Prefix of a collection: one namespace, or all of them when `namespace` is absent. */
export function collectionPrefix(r: ServedResource, namespace?: string): string {
  return r.namespaced && namespace ? `${resourcePrefix(r)}${namespace}/` : resourcePrefix(r);
}

export function objectKey(r: ServedResource, namespace: string | undefined, name: string): string {
  const p = resourcePrefix(r);
  return r.namespaced ? `${p}${namespace ?? ''}/${name}` : `${p}${name}`;
}
