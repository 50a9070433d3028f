// The metrics collector: metrics-server inside kdp. Every interval (15 s, divided by the time
// scale) it scrapes each node's kubelet `/metrics/resource`, keeps the last two samples per node
// and turns the cumulative CPU counters into rates over the window between them. A container
// seen once (just started, or restarted since) is rated from its start time, as metrics-server
// does; a node needs two samples. The result is what the metrics.k8s.io API serves.

import type { Node, Pod } from '../api/types.js';
import { cpuQuantity, memoryQuantity } from './quantity.js';
import { parseResourceMetrics, type NodeStats } from './resource-stats.js';

export interface ScrapeTarget {
  readonly node: string;
  /** The node's `/metrics/resource` text. */
  scrape(): Promise<string>;
}

export interface CollectorOptions {
  readonly intervalMs: number;
  /** What to scrape this round, given the Nodes just listed. */
  targets(nodes: readonly Node[]): readonly ScrapeTarget[];
  /** Labels for the served objects (read once per round). */
  listNodes(): Promise<readonly Node[]>;
  listPods(): Promise<readonly Pod[]>;
  readonly onError?: (node: string, e: unknown) => void;
}

export interface MetricsObject {
  readonly kind: 'NodeMetrics' | 'PodMetrics';
  readonly apiVersion: 'metrics.k8s.io/v1beta1';
  readonly metadata: { name: string; namespace?: string; labels?: Record<string, string>; creationTimestamp: string };
  readonly timestamp: string;
  readonly window: string;
  readonly usage?: { cpu: string; memory: string };
  readonly containers?: Array<{ name: string; usage: { cpu: string; memory: string } }>;
}

export interface MetricsCollector {
  /** Scrapes now, again a moment later (a first rate), then every interval. */
  start(): Promise<void>;
  stop(): void;
  /** One round of scrapes (tests; `start` runs them on its timer). */
  scrapeNow(): Promise<void>;
  /** Whether a round has completed (the APIService's Available). */
  readonly ready: boolean;
  nodeMetrics(): MetricsObject[];
  podMetrics(): MetricsObject[];
}

/** metav1.Duration's text (Go's time.Duration.String): `15s`, `1m0.5s`, `950ms`. */
export function goDuration(ms: number): string {
  if (ms <= 0) return '0s';
  if (ms < 1000) return `${Number(ms.toFixed(6))}ms`;
  const total = ms / 1000;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = Number((total - h * 3600 - m * 60).toFixed(9));
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

interface Kept { prev?: NodeStats; last: NodeStats }

export function buildMetricsCollector(o: CollectorOptions): MetricsCollector {
  const kept = new Map<string, Kept>();
  let nodeLabels = new Map<string, Record<string, string>>();
  let podLabels = new Map<string, Record<string, string>>();
  let timer: NodeJS.Timeout | undefined;
  let ready = false;
  let round: Promise<void> | undefined;

  const scrapeRound = async () => {
    const [nodes, pods] = await Promise.all([o.listNodes(), o.listPods()]);
    const targets = o.targets(nodes);
    nodeLabels = new Map(nodes.map((n) => [n.metadata.name!, n.metadata.labels ?? {}]));
    podLabels = new Map(pods.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p.metadata.labels ?? {}]));
    await Promise.all(targets.map(async (t) => {
      try {
        const stats = parseResourceMetrics(t.node, await t.scrape());
        const k = kept.get(t.node);
        kept.set(t.node, k && k.last.timestamp < stats.timestamp ? { prev: k.last, last: stats } : { last: stats });
      } catch (e) { o.onError?.(t.node, e); }
    }));
    const live = new Set(targets.map((t) => t.node));
    for (const n of kept.keys()) if (!live.has(n) || !nodeLabels.has(n)) kept.delete(n);
    ready = true;
  };
  const scrapeNow = () => {
    round ??= scrapeRound().finally(() => { round = undefined; });
    return round;
  };
  const schedule = (ms: number) => {
    timer = setTimeout(() => { void scrapeNow().finally(() => { if (timer) schedule(o.intervalMs); }); }, ms);
    timer.unref?.();
  };

  return {
    async start() {
      await scrapeNow();
      schedule(Math.min(o.intervalMs, 1000));
    },
    stop() { clearTimeout(timer); timer = undefined; },
    scrapeNow,
    get ready() { return ready; },
    nodeMetrics() {
      const out: MetricsObject[] = [];
      for (const [name, k] of kept) {
        if (!k.prev) continue;
        const dt = (k.last.timestamp - k.prev.timestamp) / 1000;
        const cpu = Math.max(0, k.last.cpuSeconds - k.prev.cpuSeconds) / dt;
        out.push({ kind: 'NodeMetrics', apiVersion: 'metrics.k8s.io/v1beta1',
          metadata: { name, labels: nodeLabels.get(name) ?? {}, creationTimestamp: rfc3339(Date.now()) },
          timestamp: rfc3339(k.last.timestamp), window: goDuration(dt * 1000),
          usage: { cpu: cpuQuantity(cpu * 1e9), memory: memoryQuantity(k.last.memoryBytes) } });
      }
      return out.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    },
    podMetrics() {
      const out: MetricsObject[] = [];
      for (const k of kept.values()) {
        const before = new Map(k.prev?.pods.map((p) => [`${p.namespace}/${p.name}`, p]) ?? []);
        for (const p of k.last.pods) {
          const key = `${p.namespace}/${p.name}`;
          if (!podLabels.has(key)) continue;
          let windowMs = 0;
          const containers = p.containers.map((c) => {
            const was = before.get(key)?.containers.find((x) => x.name === c.name);
            const fresh = !was || was.cpuSeconds > c.cpuSeconds || was.startTime !== c.startTime;
            const from = fresh ? c.startTime : k.prev!.timestamp;
            const dt = Math.max(1, k.last.timestamp - from);
            windowMs = Math.max(windowMs, dt);
            const cpu = Math.max(0, c.cpuSeconds - (fresh ? 0 : was.cpuSeconds)) / (dt / 1000);
            return { name: c.name, usage: { cpu: cpuQuantity(cpu * 1e9), memory: memoryQuantity(c.memoryBytes) } };
          });
          if (!containers.length) continue;
          out.push({ kind: 'PodMetrics', apiVersion: 'metrics.k8s.io/v1beta1',
            metadata: { name: p.name, namespace: p.namespace, labels: podLabels.get(key) ?? {},
              creationTimestamp: rfc3339(Date.now()) },
            timestamp: rfc3339(k.last.timestamp), window: goDuration(windowMs), containers });
        }
      }
      return out.sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`
        .localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
    },
  };
}
