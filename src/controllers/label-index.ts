// A pod index by label pair (`key=value`), so "pods matching this selector" costs the size of
// the smallest matching set instead of a scan of the namespace (10,000 pods in one namespace
// would otherwise make every Service or ReplicaSet sync a full scan).

import type { ObjectCache } from '../client/cache.js';
import type { KubeObject } from '../client/types.js';

export const LABEL_PAIR_INDEX = 'labelPair';

export const labelPairIndex = (o: KubeObject): string[] =>
  Object.entries(o.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`);

/** Objects in `namespace` whose labels contain every pair of `selector` (a non-empty map). */
export function objectsMatchingMap<T extends KubeObject>(
  cache: ObjectCache<T>, namespace: string, selector: Readonly<Record<string, string>>,
): T[] {
  const pairs = Object.entries(selector);
  if (pairs.length === 0) return [];
  let best: T[] | undefined;
  for (const [k, v] of pairs) {
    const c = cache.byIndex(LABEL_PAIR_INDEX, `${k}=${v}`);
    if (!best || c.length < best.length) best = c;
    if (c.length === 0) break;
  }
  return best!.filter((o) => (o.metadata.namespace ?? '') === namespace
    && pairs.every(([k, v]) => o.metadata.labels?.[k] === v));
}
