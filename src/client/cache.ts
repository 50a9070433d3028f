// Indexed object cache behind an informer: objects keyed by `namespace/name` (or `name` for
// cluster-scoped objects), plus named secondary indexes (e.g. pods by spec.nodeName). The cache
// holds the objects as received; callers must treat them as read-only.

import type { KubeObject } from './types.js';

/** Returns the index values an object is filed under (zero or more). */
export type IndexFunc<T extends KubeObject> = (obj: T) => string[];

export interface ObjectCache<T extends KubeObject> {
  get(key: string): T | undefined;
  getByName(namespace: string | undefined, name: string): T | undefined;
  list(): T[];
  keys(): string[];
  /** Objects whose index `indexName` contains `value`. */
  byIndex(indexName: string, value: string): T[];
  size(): number;
}

export interface MutableObjectCache<T extends KubeObject> extends ObjectCache<T> {
  /** Inserts or replaces; returns the previous object under that key. */
  upsert(obj: T): T | undefined;
  /** Removes by key; returns the removed object. */
  remove(key: string): T | undefined;
  /** Adds a secondary index (and files existing objects); no-op if the name exists. */
  addIndexer(name: string, fn: IndexFunc<T>): void;
}

/** `namespace/name`, or `name` for cluster-scoped objects (as upstream's MetaNamespaceKeyFunc). */
export function objectKey(obj: { metadata: { namespace?: string; name?: string } }): string {
  const ns = obj.metadata.namespace;
  return ns ? `${ns}/${obj.metadata.name ?? ''}` : (obj.metadata.name ?? '');
}

export function keyOf(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** Splits a key made by `objectKey` into namespace ('' when cluster-scoped) and name. */
export function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf('/');
  if (i < 0) return { namespace: '', name: key };
  return { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** Index pods (or anything) by namespace. Always present in every cache as `namespace`. */
export const namespaceIndex: IndexFunc<KubeObject> = (o) => [o.metadata.namespace ?? ''];

export function buildObjectCache<T extends KubeObject>(
  indexers: Record<string, IndexFunc<T>> = {},
): MutableObjectCache<T> {
  const items = new Map<string, T>();
  const allIndexers: Record<string, IndexFunc<T>> = { namespace: namespaceIndex, ...indexers };
  // indexName -> value -> set of keys
  const indexes = new Map<string, Map<string, Set<string>>>();
  for (const name of Object.keys(allIndexers)) indexes.set(name, new Map());

  function file(key: string, obj: T, add: boolean): void {
    for (const [name, fn] of Object.entries(allIndexers)) {
      const idx = indexes.get(name)!;
      for (const v of fn(obj)) {
        let set = idx.get(v);
        if (add) {
          if (!set) idx.set(v, (set = new Set()));
          set.add(key);
        } else if (set) {
          set.delete(key);
          if (set.size === 0) idx.delete(v);
        }
      }
    }
  }

  return {
    get: (key) => items.get(key),
    getByName: (ns, name) => items.get(keyOf(ns, name)),
    list: () => [...items.values()],
    keys: () => [...items.keys()],
    size: () => items.size,
    byIndex(indexName, value) {
      const idx = indexes.get(indexName);
      if (!idx) throw new Error(`unknown index ${indexName}`);
      const out: T[] = [];
      for (const k of idx.get(value) ?? []) out.push(items.get(k)!);
      return out;
    },
    upsert(obj) {
      const key = objectKey(obj);
      const prev = items.get(key);
      if (prev) file(key, prev, false);
      items.set(key, obj);
      file(key, obj, true);
      return prev;
    },
    addIndexer(name, fn) {
      if (allIndexers[name]) return;
      allIndexers[name] = fn;
      const idx = new Map<string, Set<string>>();
      indexes.set(name, idx);
      for (const [key, obj] of items) {
        for (const v of fn(obj)) {
          let set = idx.get(v);
          if (!set) idx.set(v, (set = new Set()));
          set.add(key);
        }
      }
    },
    remove(key) {
      const prev = items.get(key);
      if (!prev) return undefined;
      file(key, prev, false);
      items.delete(key);
      return prev;
    },
  };
}
