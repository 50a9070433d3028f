// rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding, ClusterRoleBinding.

import type { LabelSelector, TypedObject } from './meta.js';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Role extends TypedObject {
  rules?: PolicyRule[];
}

export interface ClusterRole extends TypedObject {
  rules?: PolicyRule[];
  aggregationRule?: { clusterRoleSelectors?: LabelSelector[] };
}

export interface Subject {
  /** `User`, `Group` or `ServiceAccount`. */
  kind: string;
  apiGroup?: string;
  name: string;
  namespace?: string;
}

export interface RoleRef {
  apiGroup: string;
  kind: 'Role' | 'ClusterRole';
  name: string;
}

export interface RoleBinding extends TypedObject {
  subjects?: Subject[];
  roleRef: RoleRef;
}

export interface ClusterRoleBinding extends TypedObject {
  subjects?: Subject[];
  roleRef: RoleRef;
}
