// Builds the admission chain from the security engineer's plugins when they are present.
// Loaded dynamically so the API server runs (without admission) before that module exists.

import type { AdmissionPlugin } from './pipeline-types.js';
import type { ResourceCatalog } from './resource-types.js';
import type { ServiceDeps } from './rest/deps.js';
import { listObjects, readObject } from './rest/read.js';
import type { KubeObject } from '../client/types.js';
import { isKdpError } from '../errors.js';

export interface AdmissionWiringOptions {
  readonly serviceCIDR: string;
  readonly nodePortRange?: string;
  readonly catalog: ResourceCatalog;
  /** The service's dependencies, available once the server is built. */
  readonly getDeps: () => ServiceDeps | undefined;
}

/** get/list of stored objects for admission plugins (no authorization: server-internal). */
export function buildObjectSource(catalog: ResourceCatalog, getDeps: () => ServiceDeps | undefined) {
  const find = (group: string, resource: string) => {
    const r = catalog.all.find((x) => x.group === group && x.resource === resource);
    if (!r) throw new Error(`no served resource ${resource}.${group}`);
    return r;
  };
  return {
    async get(group: string, resource: string, namespace: string | undefined, name: string):
      Promise<KubeObject | undefined> {
      const deps = getDeps();
      if (!deps) return undefined;
      try {
        return (await readObject(deps, find(group, resource), namespace, name)).obj;
      } catch (e) {
        if (isKdpError(e, 'KDP_NOT_FOUND')) return undefined;
        throw e;
      }
    },
    async list(group: string, resource: string, namespace?: string): Promise<KubeObject[]> {
      const deps = getDeps();
      if (!deps) return [];
      return (await listObjects(deps, find(group, resource), namespace, {})).items;
    },
  };
}

export async function buildAdmission(o: AdmissionWiringOptions): Promise<AdmissionPlugin[]> {
  const path = './admission/index.js';
  let mod: { buildAdmissionPlugins?: (x: unknown) => AdmissionPlugin[] | Promise<AdmissionPlugin[]> };
  try {
    mod = await import(path) as typeof mod;
  } catch {
    return [];
  }
  if (!mod.buildAdmissionPlugins) return [];
  return mod.buildAdmissionPlugins({ serviceCIDRs: o.serviceCIDR.split(',').map((s) => s.trim()),
    nodePortRange: o.nodePortRange ?? '30000-32767',
    source: buildObjectSource(o.catalog, o.getDeps) });
}
