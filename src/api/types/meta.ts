// Common object metadata types (apimachinery meta/v1), as upstream serialises them to JSON.
// Every top-level kind extends `KubeObject` (../object.ts), so a `Pod` can be passed
// wherever a `KubeObject` is expected and used as `client.get<Pod>(...)`.

import type { KubeObject } from '../object.js';

export type { KubeObject };

/** metav1.OwnerReference. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** metav1.ManagedFieldsEntry (kept opaque apart from its identifying fields). */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
  subresource?: string;
}

/** metav1.ObjectMeta. Timestamps are RFC 3339 strings (`2024-01-02T03:04:05Z`). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  selfLink?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
}

/** metav1.ListMeta. */
export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
  selfLink?: string;
}

export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  key: string;
  operator: LabelSelectorOperator;
  values?: string[];
}

/** metav1.LabelSelector. An empty selector `{}` matches everything; `null` matches nothing. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** metav1.Condition (the generic condition shape used by newer APIs). */
export interface Condition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** intstr.IntOrString. */
export type IntOrString = number | string;

/** A resource.Quantity in its serialised form (`100m`, `128Mi`, 2). */
export type Quantity = string | number;

/** core/v1 ObjectReference. */
export interface ObjectReference {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface LocalObjectReference {
  name?: string;
}

/** A generic typed list (`PodList`, ...). */
export interface TypedList<T> {
  apiVersion: string;
  kind: string;
  metadata: ListMeta;
  items: T[];
}

/** metav1.Status, as the API server returns errors. */
export interface Status {
  apiVersion: 'v1';
  kind: 'Status';
  metadata: ListMeta;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: Array<{ reason?: string; message?: string; field?: string }>;
    retryAfterSeconds?: number;
  };
  code: number;
}

/** The fields every top-level kind has, typed. */
export interface TypedObject extends KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}
