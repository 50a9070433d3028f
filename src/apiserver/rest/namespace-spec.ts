// What namespaces add to the generic update path: spec.finalizers (upstream's FinalizerName
// list) change only through `namespaces/finalize`, and a namespace being deleted is removed
// only once that list is empty.

import type { KubeObject } from '../../client/types.js';
import type { ServedResource } from '../resource-types.js';

/** The finalizer the namespace controller removes once the namespace is empty. */
export const NAMESPACE_FINALIZER = 'kubernetes';

export function isNamespaces(r: ServedResource): boolean {
  return r.group === '' && r.resource === 'namespaces';
}

/** spec.finalizers of a namespace (never undefined). */
export function specFinalizers(o: KubeObject): string[] {
  const f = (o.spec as { finalizers?: unknown } | undefined)?.finalizers;
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === 'string') : [];
}

/** Carries spec.finalizers from `old` into `next` (in place). */
export function keepSpecFinalizers(next: KubeObject, old: KubeObject): void {
  const was = (old.spec as { finalizers?: unknown } | undefined)?.finalizers;
  const cur = (next.spec as { finalizers?: unknown } | undefined)?.finalizers;
  if (was === cur) return;
  const spec = { ...((next.spec ?? {}) as Record<string, unknown>) };
  if (was === undefined) delete spec.finalizers; else spec.finalizers = was;
  next.spec = spec;
}

/**
 * Adds the `kubernetes` finalizer if missing (create does it in api defaults, as upstream's
 * PrepareForCreate; a delete does it too, for namespaces stored without it).
 */
export function ensureNamespaceFinalizer(o: KubeObject): void {
  const fins = specFinalizers(o);
  if (fins.includes(NAMESPACE_FINALIZER)) return;
  o.spec = { ...((o.spec ?? {}) as Record<string, unknown>),
    finalizers: [...fins, NAMESPACE_FINALIZER] };
}
