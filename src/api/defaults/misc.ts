// Defaulting for the remaining kinds (upstream SetDefaults_* and create-time strategy defaults).

import type {
  ClusterRoleBinding, EndpointSlice, Namespace, Node, RoleBinding, Secret, Subject,
} from '../types.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** Label upstream adds to every namespace (SetDefaults_Namespace). */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

export function defaultNamespace(ns: Namespace): void {
  const name = ns.metadata.name;
  if (name) ns.metadata.labels = { ...(ns.metadata.labels ?? {}), [NAMESPACE_NAME_LABEL]: name };
  const st = (ns.status ??= {});
  st.phase ??= 'Active';
}

/**
 * Create-time strategy (upstream namespaceStrategy.PrepareForCreate): status Active and the
 * `kubernetes` finalizer present. Not applied on update, where the finalizer may be removed.
 */
export function prepareNamespaceForCreate(ns: Namespace): void {
  const spec = (ns.spec ??= {});
  const fin = (spec.finalizers ??= []);
  if (!fin.includes('kubernetes')) fin.push('kubernetes');
  ns.status = { phase: 'Active' };
}

export function defaultNode(n: Node): void {
  const st = n.status;
  if (st?.capacity && !st.allocatable) st.allocatable = { ...st.capacity };
}

export function defaultSecret(s: Secret): void {
  mergeStringData(s);
  s.type ??= 'Opaque';
}

/**
 * `stringData` is write-only: its values overwrite `data`'s (base64-encoded) and it is never
 * stored, as upstream's v1 → internal Secret conversion does on every write.
 */
export function mergeStringData(s: Secret): void {
  const sd = s.stringData;
  if (sd === undefined) return;
  delete s.stringData;
  if (!sd || typeof sd !== 'object' || Object.keys(sd).length === 0) return;
  const data: Record<string, string> = { ...(s.data ?? {}) };
  for (const [k, v] of Object.entries(sd)) {
    data[k] = Buffer.from(String(v), 'utf8').toString('base64');
  }
  s.data = data;
}

export function defaultEndpointSlice(es: EndpointSlice): void {
  for (const p of es.ports ?? []) {
    p.name ??= '';
    p.protocol ??= 'TCP';
  }
}

function defaultSubject(s: Subject): void {
  if (s.apiGroup) return;
  if (s.kind === 'ServiceAccount') s.apiGroup = '';
  else if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = RBAC_GROUP;
}

export function defaultBinding(b: RoleBinding | ClusterRoleBinding): void {
  if (b.roleRef && !b.roleRef.apiGroup) b.roleRef.apiGroup = RBAC_GROUP;
  for (const s of b.subjects ?? []) defaultSubject(s);
}
