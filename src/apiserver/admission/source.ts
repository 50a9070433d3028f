// What admission plugins read from the API server's storage.

import type { KubeObject } from '../../client/types.js';
import { isKdpError } from '../../errors.js';

export interface AdmissionSource {
  /** The stored object, or null/undefined (or a KDP_NOT_FOUND rejection) when absent. */
  get(resource: string, namespace: string | undefined, name: string):
    Promise<KubeObject | null | undefined>;
  /** All objects of a resource, in one namespace or (namespace undefined) in all. */
  list(resource: string, namespace?: string): Promise<KubeObject[]>;
}

/** `source.get` with absence as undefined, whichever way the source reports it. */
export async function getOrUndefined(
  source: AdmissionSource, resource: string, namespace: string | undefined, name: string,
): Promise<KubeObject | undefined> {
  try {
    return (await source.get(resource, namespace, name)) ?? undefined;
  } catch (e) {
    if (isKdpError(e, 'KDP_NOT_FOUND')) return undefined;
    throw e;
  }
}

/** The same reads addressed by API group first (`get(group, resource, namespace, name)`). */
export interface GroupedAdmissionSource {
  get(group: string, resource: string, namespace: string | undefined, name: string):
    Promise<KubeObject | null | undefined>;
  list(group: string, resource: string, namespace?: string): Promise<KubeObject[]>;
}

/**
 * Accepts either form. A grouped source is recognised by `get` taking four parameters; the
 * plugins only read core resources (services, namespaces), so they address group ''.
 */
export function toAdmissionSource(s: AdmissionSource | GroupedAdmissionSource): AdmissionSource {
  if (s.get.length < 4) return s as AdmissionSource;
  const g = s as GroupedAdmissionSource;
  return {
    get: (resource, namespace, name) => g.get('', resource, namespace, name),
    list: (resource, namespace) => g.list('', resource, namespace),
  };
}
