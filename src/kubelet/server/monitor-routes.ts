// The kubelet API's monitoring paths, as upstream's: `/metrics` (the kubelet's own metrics),
// `/metrics/resource` (resource usage for metrics-server) and `/stats/summary` (the Summary
// API). Authorised by kubelet-server.ts as nodes/metrics and nodes/stats.

import type { NodeMonitor } from '../../metrics/node-monitor.js';

const PROM = 'text/plain; version=0.0.4; charset=utf-8';

export interface MonitorAnswer { readonly code: number; readonly body: string; readonly type: string }

/** The answer for `/{kind}/{parts…}`, or undefined for a path that is not a monitoring one. */
export async function serveMonitorPath(kind: string | undefined, parts: readonly string[],
  monitor: NodeMonitor | undefined): Promise<MonitorAnswer | undefined> {
  const path = [kind, ...parts].join('/');
  if (path === 'metrics') {
    if (!monitor) return { code: 200, body: '', type: PROM };
    return { code: 200, body: await monitor.kubelet.registry.metrics(), type: monitor.kubelet.registry.contentType };
  }
  if (!monitor) return undefined;
  if (path === 'metrics/resource') return { code: 200, body: monitor.resourceText(), type: PROM };
  if (path === 'stats/summary') {
    return { code: 200, body: JSON.stringify(monitor.summary()), type: 'application/json' };
  }
  return undefined;
}
