// The API server's Prometheus metrics with upstream's names, labels and buckets
// (k8s.io/apiserver/pkg/endpoints/metrics): apiserver_request_total by verb, group, version,
// resource, subresource, scope and code, and apiserver_request_duration_seconds (long-running
// WATCH and CONNECT requests are counted, not timed, as upstream). Served on `/metrics`.

import type { IncomingMessage } from 'node:http';
import { Counter, Histogram, Registry } from 'prom-client';
import { parsePath } from './http/path.js';
import type { ResourceCatalog } from './resource-types.js';

const DURATION_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15,
  20, 30, 45, 60];
const LABELS = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;

export interface ApiServerMetrics {
  readonly registry: Registry;
  /** One finished request (`seconds` from its arrival to its last byte). */
  observe(req: IncomingMessage, code: number, seconds: number): void;
}

/** upstream's metrics verb: LIST/WATCH/GET for reads, APPLY for server-side apply, CONNECT for
 *  streams, else the HTTP method. */
export function requestVerb(method: string, name: string | undefined, url: string, contentType: string | undefined,
  subresource: string | undefined): string {
  const q = url.includes('?') ? new URLSearchParams(url.slice(url.indexOf('?') + 1)) : undefined;
  if (subresource && ['exec', 'attach', 'portforward', 'proxy'].includes(subresource)) return 'CONNECT';
  if (method === 'GET') {
    if (q?.get('watch') === 'true' || q?.get('watch') === '1') return 'WATCH';
    return name ? 'GET' : 'LIST';
  }
  if (method === 'PATCH' && contentType?.startsWith('application/apply-patch')) return 'APPLY';
  return method;
}

export function buildApiServerMetrics(catalog: ResourceCatalog): ApiServerMetrics {
  const registry = new Registry();
  const total = new Counter({ name: 'apiserver_request_total',
    help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    labelNames: [...LABELS, 'code'], registers: [registry] });
  const duration = new Histogram({ name: 'apiserver_request_duration_seconds',
    help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
    labelNames: [...LABELS], buckets: DURATION_BUCKETS, registers: [registry] });
  return {
    registry,
    observe(req, code, seconds) {
      const url = req.url ?? '';
      const parsed = url.startsWith('/api') ? parsePath(catalog, url) : undefined;
      const t = parsed?.kind === 'resource' ? parsed.target : undefined;
      const method = req.method ?? 'GET';
      const verb = t ? requestVerb(method, t.name, url, req.headers['content-type'], t.subresource) : method;
      const labels = {
        verb, dry_run: /[?&]dryRun=All/.test(url) ? 'All' : '', group: t?.group ?? '', version: t?.version ?? '',
        resource: t?.resource ?? '', subresource: t?.subresource ?? '',
        scope: !t ? '' : t.name ? 'resource' : t.namespace ? 'namespace' : 'cluster', component: 'apiserver',
      };
      total.inc({ ...labels, code: String(code) });
      if (verb !== 'WATCH' && verb !== 'CONNECT') duration.observe(labels, seconds);
    },
  };
}
