// The metrics.k8s.io/v1beta1 API as metrics-server serves it: NodeMetrics (cluster-scoped) and
// PodMetrics (namespaced), get and list only, labelSelector and fieldSelector (metadata.name,
// metadata.namespace) honoured. The API server lists the group in discovery when it is given a
// source (`metricsApi`), and answers its APIService v1beta1.metrics.k8s.io.

import { parseFieldSelector } from '../api/field-selectors.js';
import { parseLabelSelector } from '../api/selectors.js';
import type { KubeObject } from '../client/types.js';
import { kdpError } from '../errors.js';
import type { ServedResource } from '../apiserver/resource-types.js';
import type { MetricsObject } from './collector.js';

export const METRICS_GROUP = 'metrics.k8s.io';
export const METRICS_VERSION = 'v1beta1';

export interface MetricsApiSource {
  nodeMetrics(): readonly MetricsObject[];
  podMetrics(): readonly MetricsObject[];
  /** A scrape round has completed (the APIService is Available). */
  readonly ready: boolean;
}

const base = { group: METRICS_GROUP, version: METRICS_VERSION, verbs: ['get', 'list'], shortNames: [],
  categories: [], subresources: [] };

/** What discovery lists for the group (as metrics-server's APIResourceList). */
export const METRICS_RESOURCES: readonly ServedResource[] = [
  { ...base, resource: 'nodes', singular: '', kind: 'NodeMetrics', listKind: 'NodeMetricsList', namespaced: false },
  { ...base, resource: 'pods', singular: '', kind: 'PodMetrics', listKind: 'PodMetricsList', namespaced: true },
];

export function isMetricsResource(r: { group: string }): boolean {
  return r.group === METRICS_GROUP;
}

function select(items: readonly MetricsObject[], resource: string, namespace: string | undefined,
  opts: { labelSelector?: string; fieldSelector?: string }): MetricsObject[] {
  const labels = parseLabelSelector(opts.labelSelector ?? '');
  const fields = parseFieldSelector(opts.fieldSelector ?? '', resource);
  return items.filter((m) => (namespace === undefined || m.metadata.namespace === namespace)
    && labels.matches(m.metadata.labels) && fields.matches(m as unknown as KubeObject));
}

export function listMetrics(src: MetricsApiSource, resource: string, namespace: string | undefined,
  opts: { labelSelector?: string; fieldSelector?: string }) {
  const nodes = resource === 'nodes';
  const items = select(nodes ? src.nodeMetrics() : src.podMetrics(), resource, nodes ? undefined : namespace, opts);
  return { kind: nodes ? 'NodeMetricsList' : 'PodMetricsList', apiVersion: `${METRICS_GROUP}/${METRICS_VERSION}`,
    metadata: {}, items };
}

export function getMetrics(src: MetricsApiSource, resource: string, namespace: string | undefined, name: string) {
  const nodes = resource === 'nodes';
  const found = (nodes ? src.nodeMetrics() : src.podMetrics())
    .find((m) => m.metadata.name === name && (nodes || m.metadata.namespace === namespace));
  if (!found) {
    // metrics-server's NotFound for an object it has no metrics of.
    throw kdpError('KDP_NOT_FOUND', `${nodes ? 'nodemetrics' : 'podmetrics'}.metrics.k8s.io "${name}" not found`,
      { name, group: METRICS_GROUP, kind: nodes ? 'nodes' : 'pods' });
  }
  return found;
}
