// Objects are stored as JSON without `metadata.resourceVersion`; the store's modRevision becomes
// the resourceVersion on every read, so the two can never disagree.

import type { KeyValue } from '../../store/types.js';
import type { KubeObject } from '../../client/types.js';

export function encodeObject(obj: KubeObject): string {
  const { resourceVersion: _rv, ...meta } = obj.metadata;
  return JSON.stringify({ ...obj, metadata: meta });
}

export function decodeObject(kv: KeyValue): KubeObject {
  const obj = JSON.parse(kv.value) as KubeObject;
  obj.metadata.resourceVersion = String(kv.modRevision);
  return obj;
}

/** Deep copy of plain JSON data. */
export function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}
