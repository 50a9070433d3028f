// kdp up's monitoring: one NodeMonitors (netns nodes read /proc, virtual ones follow the model)
// and the in-process metrics collector serving metrics.k8s.io, started once the nodes are Ready.
// Its own nodes are scraped in process; other Ready nodes (`kdp node` processes that joined) by
// their kubelet's /metrics/resource through the API server's node proxy, as metrics-server can.

import type { Node, Pod } from '../api/types.js';
import type { Client } from '../client/types.js';
import { buildMetricsCollector, type MetricsCollector } from './collector.js';
import { buildNodeMonitors, type NodeMonitors } from './node-monitor.js';
import { buildProcSource, sharedProcSource } from './proc-stats.js';
import { request } from 'node:https';
import { startPrometheus } from './prometheus-run.js';

/** metrics-server's default --metric-resolution. */
export const METRIC_RESOLUTION_MS = 15_000;

export interface ClusterMonitoring {
  readonly monitors: NodeMonitors;
  readonly collector: MetricsCollector;
  /** Starts collecting; with `api`, nodes not run here are scraped through its node proxy. */
  start(client: Client, api?: ApiAccess): Promise<void>;
  stop(): void;
}

/** The API server as the collector reaches it (its URL, CA and a token). */
export interface ApiAccess { readonly url: string; readonly caPem: string; readonly token: string }

const isReady = (n: Node) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** GET /api/v1/nodes/NAME/proxy/metrics/resource (5 s at most). */
function viaNodeProxy(api: ApiAccess, node: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${api.url}/api/v1/nodes/${encodeURIComponent(node)}/proxy/metrics/resource`,
      { ca: api.caPem, headers: { authorization: `Bearer ${api.token}` }, timeout: 5000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => { body += c; });
        res.on('end', () => (res.statusCode === 200 ? resolve(body)
          : reject(new Error(`node ${node}: HTTP ${res.statusCode}: ${body.slice(0, 200)}`))));
      });
    req.on('timeout', () => req.destroy(new Error(`node ${node}: no answer in 5 s`)));
    req.on('error', reject);
    req.end();
  });
}

export function buildClusterMonitoring(o: { realProcesses: boolean; intervalMs: number;
  onError: (node: string, e: unknown) => void }): ClusterMonitoring {
  const monitors = buildNodeMonitors(o.realProcesses ? { proc: sharedProcSource(buildProcSource()) } : {});
  let client: Client | undefined;
  let api: ApiAccess | undefined;
  const list = async <T>(resource: string): Promise<T[]> => (client
    ? (await client.list<T & { metadata: object }>({ group: '', version: 'v1', resource })).items as T[] : []);
  const collector = buildMetricsCollector({
    intervalMs: o.intervalMs,
    targets: (nodes) => {
      const local = monitors.targets();
      const here = new Set(local.map((t) => t.node));
      const remote = !api ? [] : nodes.filter((n) => !here.has(n.metadata.name!) && isReady(n))
        .map((n) => ({ node: n.metadata.name!, scrape: () => viaNodeProxy(api!, n.metadata.name!) }));
      return [...local, ...remote];
    },
    listNodes: () => list<Node>('nodes'), listPods: () => list<Pod>('pods'), onError: o.onError,
  });
  return {
    monitors, collector,
    async start(c, a) { client = c; api = a; await collector.start(); },
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
