// The collector as metrics-server: rates from the last two scrapes of cumulative counters, a
// container seen once rated from its start time, a node only with two samples; and the
// /metrics/resource text round-trips through its parser.

import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/api/types.js';
import { buildMetricsCollector, goDuration } from '../../src/metrics/collector.js';
import { parseExposition, parseResourceMetrics, renderResourceMetrics, type NodeStats } from '../../src/metrics/resource-stats.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
function stats(ts: number, nodeCpu: number, cCpu: number): NodeStats {
  return { node: 'n1', timestamp: ts, cpuSeconds: nodeCpu, memoryBytes: 256 * 2 ** 20, startTime: T0 - 60_000,
    pods: [{ namespace: 'default', name: 'web', uid: 'u1',
      containers: [{ name: 'app', cpuSeconds: cCpu, memoryBytes: 10 * 2 ** 20, startTime: T0 - 10_000 }] }] };
}

describe('metrics collector', () => {
  it('renders and parses /metrics/resource', () => {
    const s = stats(T0, 12.5, 1.25);
    const text = renderResourceMetrics(s);
    expect(text).toContain(`container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"} 1.25 ${T0}\n`);
    expect(text).toContain(`node_memory_working_set_bytes 268435456 ${T0}\n`);
    expect(text).toContain('# TYPE pod_cpu_usage_seconds_total counter\n');
    const back = parseResourceMetrics('n1', text);
    expect(back.cpuSeconds).toBe(12.5);
    expect(back.pods[0]!.containers[0]).toEqual({ name: 'app', cpuSeconds: 1.25, memoryBytes: 10 * 2 ** 20,
      startTime: T0 - 10_000 });
  });

  it('parses the exposition format: escapes, no labels, timestamps; refuses a malformed line', () => {
    expect(parseExposition('# HELP x y\na{p="q\\"}\\\\n",c="d"} 1.5 12\nb 2\nc{} NaN\n')).toEqual([
      { name: 'a', labels: { p: 'q"}\\n', c: 'd' }, value: 1.5, ts: 12 },
      { name: 'b', labels: {}, value: 2 },
      { name: 'c', labels: {}, value: NaN }]);
    expect(() => parseExposition('a{b="c} 1\n')).toThrow(/malformed metrics line/);
    expect(() => parseExposition('a 1 2 3\n')).toThrow(/malformed metrics line/);
  });

  it('rates over the window between the last two samples', async () => {
    let next = stats(T0, 10, 1);
    const c = buildMetricsCollector({ intervalMs: 15_000, targets: () => [{ node: 'n1',
      scrape: async () => renderResourceMetrics(next) }],
    listNodes: async () => [{ metadata: { name: 'n1', labels: { a: 'b' } } } as Node],
    listPods: async () => [{ metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } } } as Pod] });
    await c.scrapeNow();
    expect(c.nodeMetrics()).toEqual([]);
    // One sample: the container is rated from its start (1 s of CPU over 10 s).
    expect(c.podMetrics()[0]!.containers).toEqual([{ name: 'app', usage: { cpu: '100m', memory: '10Mi' } }]);
    next = stats(T0 + 15_000, 10 + 7.5, 1 + 3);
    await c.scrapeNow();
    const [n] = c.nodeMetrics();
    expect(n).toMatchObject({ kind: 'NodeMetrics', metadata: { name: 'n1', labels: { a: 'b' } },
      timestamp: '2026-01-01T00:00:15Z', window: '15s', usage: { cpu: '500m', memory: '256Mi' } });
    expect(c.podMetrics()[0]).toMatchObject({ window: '15s', metadata: { labels: { app: 'web' } },
      containers: [{ name: 'app', usage: { cpu: '200m', memory: '10Mi' } }] });
  });

  it('writes windows as Go durations', () => {
    expect(goDuration(15_000)).toBe('15s');
    expect(goDuration(15_012)).toBe('15.012s');
    expect(goDuration(65_500)).toBe('1m5.5s');
    expect(goDuration(950)).toBe('950ms');
  });
});
