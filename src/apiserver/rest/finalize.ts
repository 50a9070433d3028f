// Removing an object from the store for good (after finalizers and grace periods).

import type { KubeObject } from '../../client/types.js';
import { decodeObject } from './codec.js';
import type { ServiceDeps } from './deps.js';

export async function deleteNow(deps: ServiceDeps, key: string, expectedModRevision?: number):
  Promise<KubeObject> {
  const kv = await deps.store.delete(key, expectedModRevision);
  return decodeObject(kv);
}
