// kube-proxy's latency metrics as a short time series, for the web UI's plots: after each sync
// the cumulative count and sum of `kubeproxy_sync_proxy_rules_duration_seconds` and
// `kubeproxy_network_programming_duration_seconds` — read from the registry `/metrics` serves,
// so a plot and a scrape show the same numbers — are appended to a ring kept beside the rule
// history (`<rules dir>/metrics.json`, written by RuleHistory). Consecutive samples give the
// mean over each interval, as Prometheus' rate(sum)/rate(count) would.

import type { Registry } from 'prom-client';

export const SYNC_DURATION = 'kubeproxy_sync_proxy_rules_duration_seconds';
export const NETWORK_PROGRAMMING = 'kubeproxy_network_programming_duration_seconds';
/** Samples kept (at one per sync, at most one a second: two minutes or more). */
export const SAMPLES_KEPT = 120;

export interface HistogramTotals {
  readonly count: number;
  readonly sum: number;
}

export interface MetricSample {
  /** Epoch ms of the sample. */
  readonly time: number;
  readonly sync: HistogramTotals;
  readonly programming: HistogramTotals;
}

async function totals(registry: Registry, name: string): Promise<HistogramTotals> {
  const m = registry.getSingleMetric(name);
  if (!m) return { count: 0, sum: 0 };
  const { values } = await m.get();
  const pick = (suffix: string) => values.find((v) =>
    (v as { metricName?: string }).metricName === `${name}${suffix}`)?.value ?? 0;
  return { count: pick('_count'), sum: pick('_sum') };
}

/** The registry's two latency histograms now. */
export async function sampleLatencyMetrics(registry: Registry, now = Date.now()): Promise<MetricSample> {
  const [sync, programming] = await Promise.all([totals(registry, SYNC_DURATION),
    totals(registry, NETWORK_PROGRAMMING)]);
  return { time: now, sync, programming };
}

/**
 * Calls `write` with a sample after `changed()`, at most once per `minIntervalMs` (a later
 * change inside the interval is sampled at its end). `stop()` drops a pending one.
 */
export function buildSampler(registry: Registry, write: (s: MetricSample) => void,
  minIntervalMs = 1000, onError?: (e: unknown) => void): { changed(): void; stop(): void } {
  let last = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const take = () => {
    timer = undefined;
    last = Date.now();
    sampleLatencyMetrics(registry, last).then((s) => { if (!stopped) write(s); }, onError);
  };
  return {
    changed() {
      if (stopped || timer) return;
      const wait = last + minIntervalMs - Date.now();
      if (wait <= 0) take();
      else {
        timer = setTimeout(take, wait);
        timer.unref?.();
      }
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
