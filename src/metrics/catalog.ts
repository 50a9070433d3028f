// How the API server serves the computed metrics resources: metrics.k8s.io nodes/pods and
// apiregistration.k8s.io apiservices join the catalog (so every discovery form lists them) only
// when it has a metrics source; their reads are answered here, never from the store.

import type { ResourceCatalog, ServedResource } from '../apiserver/resource-types.js';
import { buildResourceCatalog } from '../apiserver/resource-types.js';
import type { ServiceDeps } from '../apiserver/rest/deps.js';
import { getMetrics, isMetricsResource, listMetrics, METRICS_RESOURCES, type MetricsApiSource } from './api.js';
import { APISERVICES, getApiService, isApiServices, listApiServices } from './api-services.js';

export function withMetricsApi(cat: ResourceCatalog, src: MetricsApiSource | undefined): ResourceCatalog {
  if (!src) return cat;
  const extra = [...METRICS_RESOURCES, APISERVICES].filter((x) => !cat.find(x.group, x.version, x.resource));
  return extra.length ? buildResourceCatalog([...cat.all, ...extra]) : cat;
}

export function isComputedMetrics(r: ServedResource): boolean {
  return isMetricsResource(r) || isApiServices(r);
}

const started = new Date().toISOString().replace(/\.\d+Z$/, 'Z');

export function getComputed(deps: ServiceDeps, r: ServedResource, namespace: string | undefined, name: string) {
  if (isApiServices(r)) return getApiService(deps.catalog, started, name, deps.metricsApi);
  return getMetrics(deps.metricsApi!, r.resource, namespace, name);
}

export function listComputed(deps: ServiceDeps, r: ServedResource, namespace: string | undefined,
  opts: { labelSelector?: string; fieldSelector?: string }) {
  if (isApiServices(r)) return listApiServices(deps.catalog, started, deps.metricsApi);
  return listMetrics(deps.metricsApi!, r.resource, namespace, opts);
}
