// core/v1 ConfigMap, Secret, ServiceAccount and Event, as upstream JSON.

import type { LocalObjectReference, ObjectReference, TypedObject } from './meta.js';

export interface ConfigMap extends TypedObject {
  data?: Record<string, string>;
  /** Base64-encoded values. */
  binaryData?: Record<string, string>;
  immutable?: boolean;
}

export interface Secret extends TypedObject {
  /** Base64-encoded values. */
  data?: Record<string, string>;
  /** Write-only convenience field; merged into `data` on write. */
  stringData?: Record<string, string>;
  type?: string;
  immutable?: boolean;
}

export interface ServiceAccount extends TypedObject {
  secrets?: ObjectReference[];
  imagePullSecrets?: LocalObjectReference[];
  automountServiceAccountToken?: boolean;
}

export interface EventSource {
  component?: string;
  host?: string;
}

/** core/v1 Event. */
export interface Event extends TypedObject {
  involvedObject: ObjectReference;
  reason?: string;
  message?: string;
  source?: EventSource;
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  count?: number;
  type?: 'Normal' | 'Warning' | string;
  eventTime?: string | null;
  series?: { count?: number; lastObservedTime?: string };
  action?: string;
  related?: ObjectReference;
  reportingComponent?: string;
  reportingInstance?: string;
}
