// Discovery documents: legacy (`/api`, `/api/v1`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>`) and
// aggregated (apidiscovery.k8s.io v2 and v2beta1, chosen by the Accept header; client-go reads
// the format from the response Content-Type only).

import type { ResourceCatalog, ServedResource } from './resource-types.js';
import { groupVersion } from './resource-types.js';

export function apiVersions(serverAddress: string) {
  return { kind: 'APIVersions', versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function versionsOf(cat: ResourceCatalog, group: string): string[] {
  return [...new Set(cat.all.filter((r) => r.group === group).map((r) => r.version))];
}

function apiGroup(cat: ResourceCatalog, group: string) {
  const versions = versionsOf(cat, group)
    .map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { name: group, versions, preferredVersion: versions[0] };
}

export function apiGroupList(cat: ResourceCatalog) {
  return { kind: 'APIGroupList', apiVersion: 'v1',
    groups: cat.groups().filter((g) => g !== '').map((g) => apiGroup(cat, g)) };
}

export function apiGroupDoc(cat: ResourceCatalog, group: string) {
  if (!group || !cat.all.some((r) => r.group === group)) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(cat, group) };
}

export function apiResourceList(cat: ResourceCatalog, group: string, version: string) {
  const rs = cat.all.filter((r) => r.group === group && r.version === version);
  if (!rs.length) return undefined;
  const resources: Record<string, unknown>[] = [];
  for (const r of rs) {
    const e: Record<string, unknown> = { name: r.resource, singularName: r.singular,
      namespaced: r.namespaced, kind: r.kind, verbs: r.verbs };
    if (r.shortNames.length) e.shortNames = r.shortNames;
    if (r.categories.length) e.categories = r.categories;
    resources.push(e);
    for (const s of r.subresources) {
      const se: Record<string, unknown> = { name: `${r.resource}/${s.name}`, singularName: '',
        namespaced: r.namespaced, kind: s.kind, verbs: s.verbs };
      if (s.group !== r.group || s.version !== r.version) {
        se.group = s.group;
        se.version = s.version;
      }
      resources.push(se);
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1',
    groupVersion: groupVersion({ group, version }), resources };
}

function discoveryResource(r: ServedResource) {
  const e: Record<string, unknown> = {
    resource: r.resource, responseKind: { group: r.group, version: r.version, kind: r.kind },
    scope: r.namespaced ? 'Namespaced' : 'Cluster', singularResource: r.singular, verbs: r.verbs,
  };
  if (r.shortNames.length) e.shortNames = r.shortNames;
  if (r.categories.length) e.categories = r.categories;
  if (r.subresources.length) {
    e.subresources = r.subresources.map((s) => ({ subresource: s.name,
      responseKind: { group: s.group, version: s.version, kind: s.kind }, verbs: s.verbs }));
  }
  return e;
}

export type AggregatedVersion = 'v2' | 'v2beta1';

/** Aggregated discovery for the core group (`/api`) or the named groups (`/apis`). */
export function aggregatedDiscovery(cat: ResourceCatalog, core: boolean, v: AggregatedVersion) {
  const groups = cat.groups().filter((g) => (core ? g === '' : g !== ''));
  const items = groups.map((g) => ({
    metadata: g ? { name: g, creationTimestamp: null } : { creationTimestamp: null },
    versions: versionsOf(cat, g).map((ver) => ({ version: ver, freshness: 'Current',
      resources: cat.all.filter((r) => r.group === g && r.version === ver)
        .map(discoveryResource) })),
  }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${v}`,
    metadata: {}, items };
}

export function aggregatedContentType(v: AggregatedVersion): string {
  return `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList`;
}
