// Cost of one metrics-server scrape per node (issue 15): the kubelet side (sample usage, render
// /metrics/resource) and the collector side (parse it, keep it, build NodeMetrics/PodMetrics),
// for a virtual node with 10 and 110 pods (two containers each), and the netns reader's pass over
// this host's /proc (every process's stat, then the VmRSS of one tree per container). At the
// default resolution (15 s) a node costs its scrape time / 15 s of one core.
//   node bin/run-ts.js bench/metrics-scrape.ts

import { loadavg } from 'node:os';
import type { Node, Pod } from '../src/api/types.js';
import { buildMetricsCollector } from '../src/metrics/collector.js';
import { buildNodeMonitors } from '../src/metrics/node-monitor.js';
import { buildProcSource, treeUsage } from '../src/metrics/proc-stats.js';

function pods(n: number, t0: number): Pod[] {
  return Array.from({ length: n }, (_, i) => ({ apiVersion: 'v1', kind: 'Pod',
    metadata: { name: `web-${i}`, namespace: 'default', uid: `u${i}`, labels: { app: 'web' },
      creationTimestamp: new Date(t0 - 60_000).toISOString() },
    spec: { containers: ['app', 'side'].map((name) => ({ name, image: 'kdp/echo',
      resources: { requests: { cpu: '10m', memory: '8Mi' } } })) },
    status: { phase: 'Running', podIP: '10.244.0.2', containerStatuses: ['app', 'side'].map((name) => ({
      name, ready: true, restartCount: 0, image: 'kdp/echo', imageID: '',
      state: { running: { startedAt: new Date(t0 - 50_000).toISOString() } } })) } }) as Pod);
}

async function time(label: string, runs: number, f: () => unknown | Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(20, runs); i++) await f();
  const t = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) await f();
  const us = Number(process.hrtime.bigint() - t) / 1e3 / runs;
  console.log(`${label.padEnd(58)} ${us.toFixed(1).padStart(9)} µs`);
  return us;
}

async function main() {
  console.log(`load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  for (const n of [10, 110]) {
    const t0 = Date.now();
    const list = pods(n, t0);
    const monitors = buildNodeMonitors();
    const m = monitors.attach('n1', { pods: () => list }, {});
    const text = m.resourceText();
    const collector = buildMetricsCollector({ intervalMs: 15_000, targets: () => monitors.targets(),
      listNodes: async () => [{ metadata: { name: 'n1' } } as Node], listPods: async () => list });
    await collector.scrapeNow();
    const kubelet = await time(`virtual node, ${n} pods: kubelet render (${text.length} B)`, 500, () => m.resourceText());
    const round = await time(`virtual node, ${n} pods: one collector round (scrape+parse)`, 500, () => collector.scrapeNow());
    const serve = await time(`virtual node, ${n} pods: PodMetrics list`, 500, () => collector.podMetrics());
    console.log(`  per node at 15 s resolution: ${((kubelet + round) / 15e6 * 100).toFixed(4)} % of a core; `
      + `kubectl top pods answer ${serve.toFixed(0)} µs`);
  }
  const proc = buildProcSource();
  const snap = proc.snapshot();
  console.log(`/proc on this host: ${snap.size} processes`);
  await time('netns reader: one /proc pass (every stat)', 50, () => proc.snapshot());
  // Leaf processes stand in for containers (a busybox container is one process).
  const parents = new Set([...snap.values()].map((p) => p.ppid));
  const roots = [...snap.keys()].filter((p) => !parents.has(p)).slice(0, 20);
  await time(`netns reader: ${roots.length} single-process containers (VmRSS each)`, 50, () => treeUsage(snap, roots));
}

void main();
