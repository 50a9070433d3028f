// kdp up's monitoring: one NodeMonitors (netns nodes read /proc, virtual ones follow the model)
// and the in-process metrics collector serving metrics.k8s.io, started once the nodes are Ready.

import type { Node, Pod } from '../api/types.js';
import type { Client } from '../client/types.js';
import { buildMetricsCollector, type MetricsCollector } from './collector.js';
import { buildNodeMonitors, type NodeMonitors } from './node-monitor.js';
import { buildProcSource } from './proc-stats.js';

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
  const monitors = buildNodeMonitors(o.realProcesses ? { proc: buildProcSource() } : {});
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
