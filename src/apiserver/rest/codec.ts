// Objects are stored as JSON without `metadata.resourceVersion`; the store's modRevision becomes
// the resourceVersion on every read, so the two can never disagree. Stored JSON starts with
// apiVersion, kind and metadata (as upstream serialises), so the JSON served for a write is the
// stored text with the resourceVersion spliced in: each object is serialised once per write.

import type { KeyValue } from '../../store/types.js';
import type { KubeObject } from '../../client/types.js';

export function encodeObject(obj: KubeObject): string {
  const { resourceVersion: _rv, ...meta } = obj.metadata;
  const { apiVersion, kind, metadata: _m, ...rest } = obj;
  return JSON.stringify({ apiVersion, kind, metadata: meta, ...rest });
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

/** `stored` (encodeObject's text of `obj`) as served, with `metadata.resourceVersion`. */
export function servedJson(stored: string, obj: KubeObject, rv: string): string | undefined {
  if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return undefined;
  const head = `{"apiVersion":${JSON.stringify(obj.apiVersion)},"kind":` +
    `${JSON.stringify(obj.kind)},"metadata":{`;
  if (!stored.startsWith(head)) return undefined;
  const sep = stored.charCodeAt(head.length) === 0x7d /* } */ ? '' : ',';
  return `${head}"resourceVersion":${JSON.stringify(rv)}${sep}${stored.slice(head.length)}`;
}

const ENCODED = Symbol('kdp.encodedJson');

/**
 * Attaches the JSON text `obj` is served as (not enumerable: spreads, clones and JSON ignore
 * it). Only for an object about to be answered; `forgetEncoding` before mutating one.
 */
export function withEncoding<T extends object>(obj: T, json: string | undefined): T {
  if (json !== undefined) {
    Object.defineProperty(obj, ENCODED, { value: json, configurable: true, writable: true });
  }
  return obj;
}

export function forgetEncoding(obj: object): void {
  if (ENCODED in obj) delete (obj as Record<symbol, unknown>)[ENCODED];
}

/** The text attached by `withEncoding`, if any. */
export function encodingOf(obj: unknown): string | undefined {
  return obj && typeof obj === 'object' ?
    (obj as Record<symbol, string | undefined>)[ENCODED] : undefined;
}
