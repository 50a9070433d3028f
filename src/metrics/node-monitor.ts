// Each node's monitoring side of its kubelet: the usage sampler behind /metrics/resource and
// /stats/summary, and the kubelet's own /metrics registry; and the collector's scrape targets.
// kdp up builds one NodeMonitors; the node set attaches each node's kubelet as it starts.

import type { Pod } from '../api/types.js';
import type { ScrapeTarget } from './collector.js';
import { buildKubeletMetrics, type KubeletMetrics } from './kubelet-metrics.js';
import { buildNodeStatsSource, ownShareOf } from './node-stats.js';
import type { ProcSource } from './proc-stats.js';
import { renderResourceMetrics, renderSummary, type NodeStats } from './resource-stats.js';

/** What the kubelet API serves for monitoring (kubelet/server/monitor-routes.ts). */
export interface NodeMonitor {
  readonly kubelet: KubeletMetrics;
  stats(): NodeStats;
  /** `/metrics/resource`. */
  resourceText(): string;
  /** `/stats/summary`. */
  summary(): unknown;
}

export interface NodeMonitors {
  /** Starts monitoring a node's kubelet (its pods; in netns mode its containers' pids). */
  attach(node: string, kubelet: { pods(): readonly Pod[] },
    runtime: { containerPid?(uid: string, container: string): number | undefined }): NodeMonitor;
  detach(node: string): void;
  get(node: string): NodeMonitor | undefined;
  /** One target per attached node, scraped in process (the text its kubelet serves). */
  targets(): ScrapeTarget[];
}

export function buildNodeMonitors(o: { proc?: ProcSource; now?: () => number } = {}): NodeMonitors {
  const nodes = new Map<string, NodeMonitor>();
  const share = ownShareOf(() => nodes.size);
  return {
    attach(node, kubelet, runtime) {
      const startTime = (o.now ?? Date.now)();
      const real = o.proc && runtime.containerPid;
      const stats = buildNodeStatsSource({ node, startTime, pods: () => kubelet.pods(), now: o.now,
        ...(real ? { proc: o.proc, containerPid: (uid, c) => runtime.containerPid!(uid, c), ownShare: share } : {}) });
      const metrics = buildKubeletMetrics({ startTime, pods: () => kubelet.pods() });
      const m: NodeMonitor = {
        kubelet: metrics, stats,
        resourceText: () => { metrics.update(); return renderResourceMetrics(stats()); },
        summary: () => renderSummary(stats()),
      };
      nodes.set(node, m);
      return m;
    },
    detach: (node) => { nodes.delete(node); },
    get: (node) => nodes.get(node),
    targets: () => [...nodes].map(([node, m]) => ({ node, scrape: async () => m.resourceText() })),
  };
}
