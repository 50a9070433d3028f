// `kdp up --prometheus`: a Prometheus scrape configuration for the cluster, everything through
// the API server (HTTPS, the cluster CA, the admin token from a 0600 file), as Prometheus's own
// Kubernetes examples reach kubelets: the API server's /metrics; each kubelet's /metrics and
// /metrics/resource by the nodes/proxy subresource; each kube-proxy's :10249 by nodes/proxy
// (`http:<node>:10249` — up when its metricsBindAddress listens on the node's address, e.g.
// 0.0.0.0:10249 as kind sets it; 127.0.0.1, the default, is reachable only inside the node);
// the DNS pods' :9153 by pods/proxy, listed in a file_sd targets file kdp rewrites as they
// change (Debian's prometheus is built without Kubernetes service discovery).

import { stringify } from 'yaml';

export interface PrometheusConfigOptions {
  /** The API server's URL (https://127.0.0.1:6443). */
  readonly apiServer: string;
  readonly nodes: readonly string[];
  readonly caFile: string;
  readonly tokenFile: string;
  /** The file_sd file of the DNS pods (dnsTargets writes it). */
  readonly dnsTargetsFile: string;
  /** Scrape interval in seconds (15 at time scale 1). */
  readonly intervalSeconds: number;
}

export function renderPrometheusConfig(o: PrometheusConfigOptions): string {
  const host = new URL(o.apiServer).host;
  const client = { scheme: 'https', tls_config: { ca_file: o.caFile },
    authorization: { type: 'Bearer', credentials_file: o.tokenFile } };
  const viaNodeProxy = (job: string, path: (node: string) => string, port?: number) => ({
    job_name: job, ...client, static_configs: o.nodes.map((n) => ({ targets: [host],
      labels: { node: n, __metrics_path__: `/api/v1/nodes/${port ? `http:${n}:${port}` : n}/proxy${path(n)}` } })),
  });
  const interval = `${Math.max(1, Math.round(o.intervalSeconds))}s`;
  return stringify({
    global: { scrape_interval: interval, evaluation_interval: interval, external_labels: { cluster: 'kdp' } },
    scrape_configs: [
      { job_name: 'apiserver', ...client, static_configs: [{ targets: [host] }] },
      viaNodeProxy('kubelet', () => '/metrics'),
      viaNodeProxy('kubelet-resource', () => '/metrics/resource'),
      viaNodeProxy('kube-proxy', () => '/metrics', 10249),
      { job_name: 'coredns', ...client, file_sd_configs: [{ files: [o.dnsTargetsFile], refresh_interval: interval }],
        relabel_configs: [
          { source_labels: ['pod'], target_label: '__metrics_path__',
            replacement: '/api/v1/namespaces/kube-system/pods/http:$1:9153/proxy/metrics' },
        ] },
    ],
  }, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** The file_sd target groups of the DNS pods: one per pod, scraped through the API server. */
export function dnsTargets(apiServer: string, pods: readonly string[]): string {
  const host = new URL(apiServer).host;
  return `${JSON.stringify(pods.map((pod) => ({ targets: [host], labels: { pod } })), null, 2)}\n`;
}
