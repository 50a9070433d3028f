// apiregistration.k8s.io/v1 APIServices, read-only and computed (kdp has no aggregation proxy:
// every group is served in-process). As upstream's kube-aggregator lists them: one per group
// version, `Local` (spec.service null, Available "Local APIServices are always available") for
// the built-in groups, and v1beta1.metrics.k8s.io with metrics-server's priorities (100/100),
// Available once the in-process collector has completed a scrape round (else
// FailedDiscoveryCheck), which is what `kubectl get apiservice v1beta1.metrics.k8s.io` checks.

import type { KubeObject } from '../client/types.js';
import { kdpError } from '../errors.js';
import type { ResourceCatalog, ServedResource } from '../apiserver/resource-types.js';
import { age } from '../apiserver/table/duration.js';
import { col, AGE_COL, NAME_COL, type Printer } from '../apiserver/table/types.js';
import { METRICS_GROUP, type MetricsApiSource } from './api.js';

export const APISERVICES: ServedResource = {
  group: 'apiregistration.k8s.io', version: 'v1', resource: 'apiservices', singular: 'apiservice',
  kind: 'APIService', listKind: 'APIServiceList', namespaced: false, verbs: ['get', 'list'], shortNames: [],
  categories: ['api-extensions'], subresources: [],
};

export function isApiServices(r: { group: string; resource: string }): boolean {
  return r.group === APISERVICES.group && r.resource === APISERVICES.resource;
}

function apiService(group: string, version: string, created: string, metrics?: MetricsApiSource): KubeObject {
  const local = group !== METRICS_GROUP;
  const ok = local || metrics?.ready === true;
  const condition = { type: 'Available', status: ok ? 'True' : 'False', lastTransitionTime: created,
    reason: local ? 'Local' : ok ? 'Passed' : 'FailedDiscoveryCheck',
    message: local ? 'Local APIServices are always available' : ok ? 'all checks passed' : 'metrics not available yet' };
  return {
    apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService',
    metadata: { name: group ? `${version}.${group}` : `${version}.`, creationTimestamp: created,
      ...(local ? { labels: { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' } } : {}) },
    spec: { ...(group ? { group } : {}), version, service: null,
      groupPriorityMinimum: local ? 18000 : 100, versionPriority: local ? 15 : 100 },
    status: { conditions: [condition] },
  } as unknown as KubeObject;
}

export function listApiServices(cat: ResourceCatalog, created: string, metrics?: MetricsApiSource) {
  const seen = new Set<string>();
  const items: KubeObject[] = [];
  for (const r of cat.all) {
    const key = `${r.version}/${r.group}`;
    if (seen.has(key)) continue;
    seen.add(key);
    items.push(apiService(r.group, r.version, created, metrics));
  }
  items.sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
  return { kind: 'APIServiceList', apiVersion: 'apiregistration.k8s.io/v1', metadata: {}, items };
}

export function getApiService(cat: ResourceCatalog, created: string, name: string, metrics?: MetricsApiSource) {
  const found = listApiServices(cat, created, metrics).items.find((x) => x.metadata.name === name);
  if (!found) {
    throw kdpError('KDP_NOT_FOUND', `apiservices.apiregistration.k8s.io "${name}" not found`,
      { name, group: APISERVICES.group, kind: 'apiservices' });
  }
  return found;
}

/** kubectl's columns: NAME SERVICE AVAILABLE AGE (SERVICE `Local` without one). */
export const apiServicePrinter: Printer = {
  columns: [NAME_COL, col('Service', 0, 'The reference to the service that hosts this API endpoint.'),
    col('Available', 0, 'Whether this service is available.'), AGE_COL],
  row: (o, now) => {
    const s = o as unknown as { spec?: { service?: { namespace: string; name: string } | null };
      status?: { conditions?: Array<{ type: string; status: string; reason?: string }> } };
    const c = s.status?.conditions?.find((x) => x.type === 'Available');
    const svc = s.spec?.service ? `${s.spec.service.namespace}/${s.spec.service.name}` : 'Local';
    const avail = !c ? 'Unknown' : c.status === 'True' ? 'True' : `${c.status} (${c.reason ?? ''})`;
    return [o.metadata.name ?? '', svc, avail, age(o.metadata.creationTimestamp, now)];
  },
};
