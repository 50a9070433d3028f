// kdp up's monitoring: one NodeMonitors (netns nodes read /proc, virtual ones follow the model)
// and the in-process metrics collector serving metrics.k8s.io, started once the nodes are Ready.

import type { Node, Pod } from '../api/types.js';
import type { Client } from '../client/types.js';
import { buildMetricsCollector, type MetricsCollector } from './collector.js';
import { buildNodeMonitors, type NodeMonitors } from './node-monitor.js';
import { buildProcSource, sharedProcSource } from './proc-stats.js';
import { startPrometheus } from './prometheus-run.js';

/** metrics-server's default --metric-resolution. */
export const METRIC_RESOLUTION_MS = 15_000;

export interface ClusterMonitoring {
  readonly monitors: NodeMonitors;
  readonly collector: MetricsCollector;
  start(client: Client): Promise<void>;
  stop(): void;
}

export function buildClusterMonitoring(o: { realProcesses: boolean; intervalMs: number;
  onError: (node: string, e: unknown) => void }): ClusterMonitoring {
  const monitors = buildNodeMonitors(o.realProcesses ? { proc: sharedProcSource(buildProcSource()) } : {});
  let client: Client | undefined;
  const list = async <T>(resource: string): Promise<T[]> => (client
    ? (await client.list<T & { metadata: object }>({ group: '', version: 'v1', resource })).items as T[] : []);
  const collector = buildMetricsCollector({
    intervalMs: o.intervalMs, targets: () => monitors.targets(),
    listNodes: () => list<Node>('nodes'), listPods: () => list<Pod>('pods'), onError: o.onError,
  });
  return {
    monitors, collector,
    async start(c) { client = c; await collector.start(); },
    stop: () => collector.stop(),
  };
}

/** `kdp up --prometheus`: the scrape config in <data dir>/prometheus, and Prometheus running on
 *  127.0.0.1:port when Debian's package is installed (prometheus-run.ts). */
export function startClusterPrometheus(o: { dataDir: string; apiServer: string; caPem: string; token: string;
  nodes: readonly string[]; timeScale: number; port: number; client: Client; progress: (l: string) => void }):
  () => Promise<void> {
  const prom = startPrometheus({ dataDir: o.dataDir, apiServer: o.apiServer, caPem: o.caPem, token: o.token,
    nodes: o.nodes, intervalSeconds: (METRIC_RESOLUTION_MS / 1000) * o.timeScale, port: o.port,
    dnsPods: async () => (await o.client.list<Pod>({ group: '', version: 'v1', resource: 'pods',
      namespace: 'kube-system' }, { labelSelector: 'k8s-app=kube-dns' })).items.map((p) => p.metadata.name!) });
  o.progress(prom.url ? `prometheus on ${prom.url} (config ${prom.configFile})`
    : `prometheus config ${prom.configFile} (install Debian's prometheus package to run it)`);
  return () => prom.close();
}
