// Builds the admission chain (security's plugins) over a server-internal object source.

import { cidrList } from '../api/net.js';
import { buildAdmissionPlugins } from './admission/index.js';
import { buildNodeRestrictionPlugin } from './admission/node-restriction.js';
import { buildCertificateSubjectRestrictionPlugin } from './admission/certificate-subject-restriction.js';
import { buildServiceAccountPlugin } from './admission/service-account.js';
import { toAdmissionSource } from './admission/source.js';
import type { AdmissionPlugin } from './pipeline-types.js';
import type { ResourceCatalog, ServedResource } from './resource-types.js';
import type { ServiceDeps } from './rest/deps.js';
import { listObjects } from './rest/read.js';
import { decodeObject } from './rest/codec.js';
import { objectKey } from './rest/keys.js';
import type { KubeObject } from '../client/types.js';

export interface AdmissionWiringOptions {
  readonly serviceCIDR: string;
  readonly nodePortRange?: string;
  readonly catalog: ResourceCatalog;
  /** The service's dependencies, available once the server is built. */
  readonly getDeps: () => ServiceDeps | undefined;
  /** The ServiceAccount plugin (default SA, token volume): on where a controller manager keeps
   *  `default` ServiceAccounts (kdp up, kdp apiserver), off for a bare API server. */
  readonly serviceAccounts?: boolean;
}

/**
 * get/list of stored objects for admission plugins (no authorization: server-internal). What
 * `get` returns is shared and read-only: a stored value is decoded once while it is current
 * (NamespaceLifecycle reads the namespace of every write).
 */
export function buildObjectSource(
  catalog: ResourceCatalog, getDeps: () => ServiceDeps | undefined,
) {
  const byResource = new Map<string, ServedResource>();
  const find = (group: string, resource: string) => {
    let r = byResource.get(`${group}/${resource}`);
    if (r) return r;
    r = catalog.all.find((x) => x.group === group && x.resource === resource);
    if (!r) throw new Error(`no served resource ${resource}.${group}`);
    byResource.set(`${group}/${resource}`, r);
    return r;
  };
  // Decoded objects by key, valid while the stored modRevision is the same (bounded).
  const decoded = new Map<string, { rev: number; obj: KubeObject }>();
  return {
    async get(group: string, resource: string, namespace: string | undefined, name: string):
      Promise<KubeObject | undefined> {
      const deps = getDeps();
      if (!deps) return undefined;
      const key = objectKey(find(group, resource), namespace, name);
      const kv = await deps.store.get(key);
      if (!kv) return undefined;
      const hit = decoded.get(key);
      if (hit?.rev === kv.modRevision) return hit.obj;
      const obj = decodeObject(kv);
      if (decoded.size >= 4096) decoded.clear();
      decoded.set(key, { rev: kv.modRevision, obj });
      return obj;
    },
    async list(group: string, resource: string, namespace?: string): Promise<KubeObject[]> {
      const deps = getDeps();
      if (!deps) return [];
      return (await listObjects(deps, find(group, resource), namespace, {})).items;
    },
  };
}

/** The chain in upstream's order: NamespaceLifecycle, ServiceAccount, NodeRestriction (enabled
 *  by default in kube-apiserver's recommended plugins), then the others, then
 *  CertificateSubjectRestriction (a validating plugin, late in upstream's order too). */
export function buildAdmission(o: AdmissionWiringOptions): AdmissionPlugin[] {
  const source = buildObjectSource(o.catalog, o.getDeps);
  const [lifecycle, ...rest] = buildAdmissionPlugins({ serviceCIDRs: cidrList(o.serviceCIDR),
    nodePortRange: o.nodePortRange ?? '30000-32767', source });
  const getNode = (name: string) => source.get('', 'nodes', undefined, name);
  const sa = o.serviceAccounts ? [buildServiceAccountPlugin({ source: toAdmissionSource(source) })] : [];
  return [lifecycle!, ...sa, buildNodeRestrictionPlugin(getNode), ...rest,
    buildCertificateSubjectRestrictionPlugin()];
}
