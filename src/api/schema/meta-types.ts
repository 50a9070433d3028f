// Type tables for apimachinery meta/v1 (ObjectMeta, LabelSelector, Condition) and the small
// core/v1 references shared by many kinds, after upstream's OpenAPI v3 schema (v1.33).

import type { Defs } from './compile.js';

/** TypeMeta is embedded in every kind: its fields belong to the kind's own struct. */
export const TYPE_META = { kind: 'string', apiVersion: 'string' } as const;

export const META_TYPES: Defs = {
  ObjectMeta: {
    $complete: 'true', name: 'string', generateName: 'string', namespace: 'string',
    selfLink: 'string',
    uid: 'string', resourceVersion: 'string', generation: 'int64', creationTimestamp: 'time',
    deletionTimestamp: 'time', deletionGracePeriodSeconds: 'int64',
    labels: 'map[string]string', annotations: 'map[string]string',
    ownerReferences: '[]OwnerReference', finalizers: '[]string',
    managedFields: '[]ManagedFieldsEntry',
  },
  OwnerReference: {
    apiVersion: 'string', kind: 'string', name: 'string', uid: 'string', controller: 'bool',
    blockOwnerDeletion: 'bool',
  },
  ManagedFieldsEntry: {
    manager: 'string', operation: 'string', apiVersion: 'string', time: 'time',
    fieldsType: 'string', fieldsV1: 'any', subresource: 'string',
  },
  LabelSelector: {
    matchLabels: 'map[string]string', matchExpressions: '[]LabelSelectorRequirement',
  },
  LabelSelectorRequirement: { key: 'string', operator: 'string', values: '[]string' },
  Condition: {
    type: 'string', status: 'string', observedGeneration: 'int64', lastTransitionTime: 'time',
    reason: 'string', message: 'string',
  },
  ObjectReference: {
    kind: 'string', namespace: 'string', name: 'string', uid: 'string', apiVersion: 'string',
    resourceVersion: 'string', fieldPath: 'string',
  },
  LocalObjectReference: { name: 'string' },
  ResourceList: 'map[string]quantity',
};
