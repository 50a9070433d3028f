// kube-proxy's latency samples for the UI's plots: the counts and sums `/metrics` serves, taken
// at most once per interval after a sync (a later change at the interval's end), kept as the
// last SAMPLES_KEPT in the rule history's metrics.json.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readMetricSamples, RuleHistory } from '../../src/proxy/history.js';
import { buildKubeProxyMetrics } from '../../src/proxy/metrics.js';
import { buildSampler, SAMPLES_KEPT, sampleLatencyMetrics, type MetricSample } from '../../src/proxy/metric-samples.js';

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

describe('kube-proxy latency samples', () => {
  it('are the histograms /metrics serves', async () => {
    const m = buildKubeProxyMetrics('iptables');
    m.sync(0.004, true, Date.now());
    m.sync(0.002, false, Date.now());
    m.programmed(1000, 3500);
    const s = await sampleLatencyMetrics(m.registry, 42);
    const text = await m.registry.metrics();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)![1]);
    expect(s).toEqual({ time: 42,
      sync: { count: value('kubeproxy_sync_proxy_rules_duration_seconds_count'),
        sum: value('kubeproxy_sync_proxy_rules_duration_seconds_sum') },
      programming: { count: 1, sum: value('kubeproxy_network_programming_duration_seconds_sum') } });
    expect(s.sync).toEqual({ count: 2, sum: expect.closeTo(0.006, 9) });
    expect(s.programming.sum).toBeCloseTo(2.5, 9);
  });

  it('are taken at most once per interval, the last change at its end', async () => {
    const m = buildKubeProxyMetrics('nftables');
    const got: MetricSample[] = [];
    const sampler = buildSampler(m.registry, (s) => got.push(s), 100);
    m.sync(0.001, true, Date.now());
    sampler.changed();
    await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 5; i++) { m.sync(0.001, false, Date.now()); sampler.changed(); }
    expect(got.map((s) => s.sync.count)).toEqual([1]);
    await new Promise((r) => setTimeout(r, 150));
    expect(got.map((s) => s.sync.count)).toEqual([1, 6]);
    sampler.changed();
    sampler.stop();
    await new Promise((r) => setTimeout(r, 150));
    expect(got).toHaveLength(2);
  });

  it('keep the last SAMPLES_KEPT in metrics.json beside the rule history', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-samples-'));
    dirs.push(dir);
    const h = new RuleHistory(dir);
    for (let i = 0; i < SAMPLES_KEPT + 5; i++) h.recordMetrics({ time: i, sync: { count: i, sum: i }, programming: { count: 0, sum: 0 } });
    const kept = readMetricSamples(dir);
    expect(kept).toHaveLength(SAMPLES_KEPT);
    expect(kept[0]!.time).toBe(5);
    expect(readMetricSamples(join(dir, 'nowhere'))).toEqual([]);
  });
});
