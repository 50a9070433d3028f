// kube-proxy's Prometheus metrics, with upstream's names, types, help and buckets
// (pkg/proxy/metrics/metrics.go): sync durations (all, full, partial), the last sync's time,
// network programming latency (from each EndpointSlice's last-change-trigger-time to its rules
// being applied), sync counts and failures. One registry per kube-proxy (per node).

import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ProxyMode } from './backend.js';
import { proxyMode } from './registry.js';

/** metrics.ExponentialBuckets(0.001, 2, 15): 1 ms … 16 s. */
const SYNC_BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);
/** Upstream's network programming buckets: 0.25 s steps to 1 s, then 1 s … 5 s, then coarser. */
const NETWORK_PROGRAMMING_BUCKETS = [
  ...[0.25, 0.5, 0.75, 1], ...[2, 3, 4, 5], ...[10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60],
  ...[120, 180, 240, 300], ...[600, 900, 1200, 1500, 1800, 2100, 2400, 2700, 3000, 3300, 3600],
];

export interface KubeProxyMetrics {
  readonly registry: Registry;
  /** One sync of one family: its duration (seconds) and whether it was a full sync. */
  sync(seconds: number, full: boolean, endTimeMs: number): void;
  syncFailed(): void;
  serviceChanged(): void;
  endpointsChanged(): void;
  /** A change triggered at `triggeredMs` is now in the kernel. */
  programmed(triggeredMs: number, nowMs: number): void;
}

export function buildKubeProxyMetrics(mode: ProxyMode): KubeProxyMetrics {
  const registry = new Registry();
  const duration = new Histogram({ name: 'kubeproxy_sync_proxy_rules_duration_seconds',
    help: 'SyncProxyRules latency in seconds', buckets: SYNC_BUCKETS, registers: [registry] });
  const full = new Histogram({ name: 'kubeproxy_sync_full_proxy_rules_duration_seconds',
    help: 'SyncProxyRules latency in seconds for full resyncs', buckets: SYNC_BUCKETS, registers: [registry] });
  const partial = new Histogram({ name: 'kubeproxy_sync_partial_proxy_rules_duration_seconds',
    help: 'SyncProxyRules latency in seconds for partial resyncs', buckets: SYNC_BUCKETS, registers: [registry] });
  const last = new Gauge({ name: 'kubeproxy_sync_proxy_rules_last_timestamp_seconds',
    help: 'The last time proxy rules were successfully synced', registers: [registry] });
  const programming = new Histogram({ name: 'kubeproxy_network_programming_duration_seconds',
    help: 'In Cluster Network Programming Latency in seconds', buckets: NETWORK_PROGRAMMING_BUCKETS,
    registers: [registry] });
  const failures = new Counter({ ...proxyMode(mode).syncFailureMetric, registers: [registry] });
  const serviceChanges = new Counter({ name: 'kubeproxy_sync_proxy_rules_service_changes_total',
    help: 'Cumulative proxy rules Service changes', registers: [registry] });
  const endpointChanges = new Counter({ name: 'kubeproxy_sync_proxy_rules_endpoint_changes_total',
    help: 'Cumulative proxy rules Endpoint changes', registers: [registry] });
  return {
    registry,
    sync(seconds, isFull, endTimeMs) {
      duration.observe(seconds);
      (isFull ? full : partial).observe(seconds);
      last.set(endTimeMs / 1000);
    },
    syncFailed() { failures.inc(); },
    serviceChanged() { serviceChanges.inc(); },
    endpointsChanged() { endpointChanges.inc(); },
    programmed(triggeredMs, nowMs) {
      if (nowMs >= triggeredMs) programming.observe((nowMs - triggeredMs) / 1000);
    },
  };
}
