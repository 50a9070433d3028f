// An in-memory RbacSource over a list of objects, for authorizer tests.
import type { RbacResource, RbacSource } from '../../../src/apiserver/authz/index.js';
import type { KubeObject } from '../../../src/client/types.js';

const KIND: Record<RbacResource, string> = {
  roles: 'Role', rolebindings: 'RoleBinding', clusterroles: 'ClusterRole',
  clusterrolebindings: 'ClusterRoleBinding',
};

export function memorySource(objects: KubeObject[]): RbacSource & { calls: number } {
  const src = {
    calls: 0,
    async list(resource: RbacResource, namespace?: string): Promise<KubeObject[]> {
      src.calls++;
      return objects.filter((o) => o.kind === KIND[resource] &&
        (namespace === undefined || o.metadata.namespace === namespace));
    },
  };
  return src;
}
