// The shape every Kubernetes object has: what the store keeps, the API server serves, clients
// carry and controllers, the kubelet and kube-proxy read. It belongs to the API (client/types.ts
// re-exports it for the client contract); concrete kinds extend it (types/meta.ts), so a `Pod`
// can be passed wherever a `KubeObject` is expected and used as `client.get<Pod>(...)`.

export interface ObjectMetaLike {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: Array<{
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }>;
  finalizers?: string[];
  managedFields?: unknown[];
}

/** Any Kubernetes object. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMetaLike;
  [field: string]: unknown;
}
