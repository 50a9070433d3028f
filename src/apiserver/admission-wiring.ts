// Builds the admission chain (security's plugins) over a server-internal object source.

import { buildAdmissionPlugins } from './admission/index.js';
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
export function buildObjectSource(
  catalog: ResourceCatalog, getDeps: () => ServiceDeps | undefined,
) {
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

export function buildAdmission(o: AdmissionWiringOptions): AdmissionPlugin[] {
  return buildAdmissionPlugins({ serviceCIDRs: o.serviceCIDR.split(',').map((s) => s.trim()),
    nodePortRange: o.nodePortRange ?? '30000-32767',
    source: buildObjectSource(o.catalog, o.getDeps) });
}
