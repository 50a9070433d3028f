// Adapter from the api package's resource registry to the API server's served resources, plus
// the review resources the server answers without storing (SelfSubjectAccessReview).

import type { ResourceInfo } from '../api/registry.js';
import { BUILTIN_RESOURCES } from '../api/registry.js';
import type { ServedResource } from './resource-types.js';
import { buildResourceCatalog } from './resource-types.js';
import type { ResourceCatalog } from './resource-types.js';

export function toServed(r: ResourceInfo): ServedResource {
  return {
    group: r.group, version: r.version, resource: r.resource, singular: r.singularName,
    kind: r.kind, listKind: r.listKind, namespaced: r.namespaced, verbs: r.verbs,
    shortNames: r.shortNames, categories: r.categories,
    subresources: r.subresources.map((s) => ({
      name: s.name, kind: s.kind, group: s.group ?? r.group, version: s.version ?? r.version,
      verbs: s.verbs,
    })),
  };
}

/** Served but never stored: answered by the authorizer (`kubectl auth can-i`). */
export const REVIEW_RESOURCES: readonly ServedResource[] = [
  {
    group: 'authorization.k8s.io', version: 'v1', resource: 'selfsubjectaccessreviews',
    singular: 'selfsubjectaccessreview', kind: 'SelfSubjectAccessReview',
    listKind: 'SelfSubjectAccessReviewList', namespaced: false, verbs: ['create'],
    shortNames: [], categories: [], subresources: [],
  },
  {
    group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews',
    singular: 'subjectaccessreview', kind: 'SubjectAccessReview',
    listKind: 'SubjectAccessReviewList', namespaced: false, verbs: ['create'],
    shortNames: [], categories: [], subresources: [],
  },
  // `kubectl auth can-i --list` and `kubectl auth whoami` (rest/self-review.ts).
  {
    group: 'authorization.k8s.io', version: 'v1', resource: 'selfsubjectrulesreviews',
    singular: 'selfsubjectrulesreview', kind: 'SelfSubjectRulesReview',
    listKind: 'SelfSubjectRulesReviewList', namespaced: false, verbs: ['create'],
    shortNames: [], categories: [], subresources: [],
  },
  {
    group: 'authentication.k8s.io', version: 'v1', resource: 'selfsubjectreviews',
    singular: 'selfsubjectreview', kind: 'SelfSubjectReview',
    listKind: 'SelfSubjectReviewList', namespaced: false, verbs: ['create'],
    shortNames: [], categories: [], subresources: [],
  },
  // kubectl before 1.28 asks v1beta1 (then v1alpha1) only.
  {
    group: 'authentication.k8s.io', version: 'v1beta1', resource: 'selfsubjectreviews',
    singular: 'selfsubjectreview', kind: 'SelfSubjectReview',
    listKind: 'SelfSubjectReviewList', namespaced: false, verbs: ['create'],
    shortNames: [], categories: [], subresources: [],
  },
];

/** Served from probes, never stored: `kubectl get componentstatuses` (rest/component-status.ts). */
export const PROBED_RESOURCES: readonly ServedResource[] = [
  {
    group: '', version: 'v1', resource: 'componentstatuses', singular: 'componentstatus',
    kind: 'ComponentStatus', listKind: 'ComponentStatusList', namespaced: false,
    verbs: ['get', 'list'], shortNames: ['cs'], categories: [], subresources: [],
  },
];

export function isReviewResource(r: ServedResource): boolean {
  return r.group === 'authorization.k8s.io';
}

export function buildDefaultCatalog(resources: readonly ResourceInfo[] = BUILTIN_RESOURCES):
  ResourceCatalog {
  const served = resources.map(toServed);
  const extra = [...REVIEW_RESOURCES, ...PROBED_RESOURCES].filter((x) =>
    !served.some((s) => s.group === x.group && s.resource === x.resource));
  return buildResourceCatalog([...served, ...extra]);
}
