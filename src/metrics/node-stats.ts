// One node's resource usage sample (what its kubelet's /metrics/resource and /stats/summary
// report). Only running containers count. Two sources:
// - netns nodes: each container's process tree read from /proc (proc-stats.ts), the node being
//   the sum of its containers plus its share of kdp's own process (the kubelet, kube-proxy and
//   control plane all run inside kdp: its CPU time and RSS divided by the node count);
// - virtual nodes run no processes, so usage follows a deterministic model (VIRTUAL_MODEL).

import type { Pod } from '../api/types.js';
import { parseQuantity } from './quantity.js';
import { treeUsage, type ProcSource } from './proc-stats.js';
import type { ContainerStats, NodeStats, PodStats } from './resource-stats.js';

/**
 * The virtual model: a running container uses its CPU request (1m without one) continuously
 * since it started, so its cumulative CPU is request × running time and its rate is exactly the
 * request; its working set is its memory request (4Mi without one). A node uses 50m and 128Mi
 * for itself (kubelet, kube-proxy, system) since its kubelet started, plus its containers.
 */
export const VIRTUAL_MODEL = {
  containerCpuCores: 0.001, containerMemoryBytes: 4 * 2 ** 20,
  nodeCpuCores: 0.05, nodeMemoryBytes: 128 * 2 ** 20,
} as const;

export interface NodeStatsOptions {
  readonly node: string;
  /** When the node's kubelet started (unix ms). */
  readonly startTime: number;
  /** The pods bound to the node, with their status. */
  pods(): readonly Pod[];
  readonly now?: () => number;
  /** netns: the host pid of a container's main process (undefined: not running). */
  containerPid?(uid: string, container: string): number | undefined;
  readonly proc?: ProcSource;
  /** netns: this node's share of kdp's own usage (cumulative CPU seconds, bytes). */
  ownShare?(): { cpuSeconds: number; memoryBytes: number };
}

interface RunningContainer { pod: Pod; name: string; startTime: number }

function runningContainers(pods: readonly Pod[]): RunningContainer[] {
  const out: RunningContainer[] = [];
  for (const pod of pods) {
    for (const cs of pod.status?.containerStatuses ?? []) {
      const started = cs.state?.running?.startedAt;
      if (started) out.push({ pod, name: cs.name, startTime: Date.parse(started) });
    }
  }
  return out;
}

function requestOf(pod: Pod, container: string, resource: 'cpu' | 'memory'): number | undefined {
  const c = pod.spec?.containers?.find((x) => x.name === container);
  return parseQuantity(c?.resources?.requests?.[resource] as string | undefined);
}

function group(node: string, now: number, startTime: number, rows: Array<RunningContainer & { stats: ContainerStats }>,
  own: { cpuSeconds: number; memoryBytes: number }): NodeStats {
  const pods = new Map<string, PodStats & { containers: ContainerStats[] }>();
  for (const r of rows) {
    const uid = r.pod.metadata.uid ?? '';
    const p = pods.get(uid) ?? { namespace: r.pod.metadata.namespace ?? '', name: r.pod.metadata.name ?? '', uid,
      containers: [] };
    pods.set(uid, p);
    p.containers.push(r.stats);
  }
  const sum = (f: (c: ContainerStats) => number) => rows.reduce((a, r) => a + f(r.stats), 0);
  return { node, timestamp: now, startTime, cpuSeconds: own.cpuSeconds + sum((c) => c.cpuSeconds),
    memoryBytes: own.memoryBytes + sum((c) => c.memoryBytes), pods: [...pods.values()] };
}

/** A sampler of the node's usage; each call is one sample taken now. */
export function buildNodeStatsSource(o: NodeStatsOptions): () => NodeStats {
  const now = o.now ?? Date.now;
  return () => {
    const t = now();
    const running = runningContainers(o.pods());
    if (o.proc && o.containerPid) {
      const pids = running.map((r) => o.containerPid!(r.pod.metadata.uid ?? '', r.name));
      const usage = treeUsage(o.proc.snapshot(), pids.filter((p): p is number => p !== undefined));
      const rows = running.flatMap((r, i) => {
        const u = pids[i] === undefined ? undefined : usage.get(pids[i]!);
        return u ? [{ ...r, stats: { name: r.name, startTime: r.startTime, ...u } }] : [];
      });
      return group(o.node, t, o.startTime, rows, o.ownShare?.() ?? { cpuSeconds: 0, memoryBytes: 0 });
    }
    const rows = running.map((r) => {
      const secs = Math.max(0, t - r.startTime) / 1000;
      const cpu = requestOf(r.pod, r.name, 'cpu') ?? VIRTUAL_MODEL.containerCpuCores;
      const mem = requestOf(r.pod, r.name, 'memory') ?? VIRTUAL_MODEL.containerMemoryBytes;
      return { ...r, stats: { name: r.name, startTime: r.startTime, cpuSeconds: cpu * secs, memoryBytes: mem } };
    });
    const up = Math.max(0, t - o.startTime) / 1000;
    return group(o.node, t, o.startTime, rows,
      { cpuSeconds: VIRTUAL_MODEL.nodeCpuCores * up, memoryBytes: VIRTUAL_MODEL.nodeMemoryBytes });
  };
}

/** kdp's own CPU seconds and RSS divided among `nodes()` nodes. */
export function ownShareOf(nodes: () => number): () => { cpuSeconds: number; memoryBytes: number } {
  return () => {
    const n = Math.max(1, nodes());
    const u = process.cpuUsage();
    return { cpuSeconds: (u.user + u.system) / 1e6 / n, memoryBytes: process.memoryUsage().rss / n };
  };
}
