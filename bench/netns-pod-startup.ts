// netns mode: 50 pods created at once on 5 nodes, creation → Ready through the whole cluster
// (API server, scheduler, kubelet, CNI ADD, workload start), with the time to each stage, and the
// memory of one echo workload process. Wall time, and CPU per pod: kdp's own process, and with
// the tools it ran and its live helpers (launcher, exec, probers, ip sessions) — the figure that
// carries across machines, as this one is shared and loaded.
// Needs root.
// node bin/run-ts.js bench/netns-pod-startup.ts

import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../src/api/types.js';
import { dataDirPaths } from '../src/cluster/data-dir.js';
import { hostPrefixFor } from '../src/cluster/data-plane-netns.js';
import { startCluster } from '../src/cluster/up.js';
import { buildHostExec } from '../src/host/exec.js';
import { listNetns } from '../src/host/netns.js';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { mib, percentile, report } from './lib-bench.js';

const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const COUNT = Number(process.env.KDP_BENCH_PODS ?? 50);
const NODES = Number(process.env.KDP_BENCH_NODES ?? 5);

/** CPU time of this process's waited-for children (/proc/self/stat cutime + cstime), ms. */
function childCpuMs(): number {
  const f = readFileSync('/proc/self/stat', 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** CPU time (ms) of this process's live children (kdp's helpers: launcher, exec, probers) and
 * of what they waited for, by pid. */
function helperCpuMs(): Map<number, number> {
  const out = new Map<number, number>();
  helperKind.clear();
  for (const task of readdirSync('/proc/self/task')) {
    const kids = readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim().split(' ');
    for (const pid of kids.filter(Boolean).map(Number)) {
      try {
        const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const x = f.slice(f.lastIndexOf(')') + 2).split(' ').slice(11, 15).map(Number);
        out.set(pid, (x[0]! + x[1]! + x[2]! + x[3]!) * 10);
        helperKind.set(pid, kindOf(pid));
      } catch { /* exited meanwhile */ }
    }
  }
  return out;
}

const helperKind = new Map<number, string>();

/** CPU time (ms) of the live children of `pid` (the launcher's workloads). */
function childrenCpuMs(pid: number): number {
  let ms = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const kids = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(' ');
    for (const k of kids.filter(Boolean)) {
      try {
        const f = readFileSync(`/proc/${k}/stat`, 'utf8');
        const x = f.slice(f.lastIndexOf(')') + 2).split(' ').slice(11, 13).map(Number);
        ms += (x[0]! + x[1]!) * 10;
      } catch { /* exited meanwhile */ }
    }
  }
  return ms;
}

/** What a helper is, for the breakdown: its program and the first words that tell them apart. */
function kindOf(pid: number): string {
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  if (argv[0] === process.execPath || argv[0]?.endsWith('/node')) {
    const src = argv[argv.indexOf('-e') + 1] ?? argv[argv.length - 1] ?? '';
    if (src.includes('kids.get')) return 'launcher helper';
    if (src.includes('execFile')) return 'exec helper';
    return `node ${argv.slice(-1)[0]?.split('/').pop()?.slice(0, 30)}`;
  }
  return argv.slice(0, 3).map((a) => a.split('/').pop()).join(' ');
}

if (process.getuid?.() !== 0) {
  console.log('netns-pod-startup: needs root; skipped');
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'kdp-bench-netns-'));
const paths = dataDirPaths(dir);
const prefix = hostPrefixFor(paths);
const cluster = await startCluster({
  paths, nodes: NODES, port: 0, proxyMode: 'iptables', timeScale: 1, dataPlane: 'netns', progress: () => {},
});
try {
  const created = new Map<string, number>();
  const ready = new Map<string, number>();
  const scheduled = new Map<string, number>();
  const hasIP = new Map<string, number>();
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const children0 = childCpuMs();
  const helpers0 = helperCpuMs();
  const t0 = performance.now();
  let allReady: () => void = () => {};
  const done = new Promise<void>((r) => { allReady = r; });
  // A watch, not polling: the bench should not load the API server it measures.
  const watch = cluster.client.watch<Pod>(PODS, { resourceVersion: '0' }, {
    onEvent(ev) {
      const p = ev.object;
      const n = p.metadata?.name;
      if (!n || !created.has(n)) return;
      const now = performance.now();
      if (p.spec?.nodeName && !scheduled.has(n)) scheduled.set(n, now);
      if (p.status?.podIP && !hasIP.has(n)) hasIP.set(n, now);
      const ok = p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      if (ok && !ready.has(n)) ready.set(n, now);
      if (ready.size === COUNT) allReady();
    },
  });
  await Promise.all(Array.from({ length: COUNT }, async (_, i) => {
    const name = `echo-${i}`;
    created.set(name, performance.now());
    await cluster.client.create(PODS, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
      spec: { containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] },
    } as Pod);
  }));
  await done;
  watch.stop();

  const wall = performance.now() - t0;
  lag.disable();
  const elu = performance.eventLoopUtilization(elu0);
  const cpu = process.cpuUsage(cpu0);
  const ownMs = (cpu.user + cpu.system) / 1000;
  const exitedMs = childCpuMs() - children0;
  const helpersMs = [...helperCpuMs()].reduce((a, [pid, ms]) => a + ms - (helpers0.get(pid) ?? 0), 0);
  const ms = [...ready].map(([n, t]) => t - created.get(n)!).sort((a, b) => a - b);
  const stage = (m: Map<string, number>) => [...created].map(([n, t]) => (m.get(n) ?? NaN) - t)
    .sort((a, b) => a - b);
  const p = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(0)} / p99 ${percentile(xs, 99).toFixed(0)}`;
  console.log(`${COUNT} pods on ${NODES} nodes; stages from creation (ms, seen through a watch):`);
  console.log(`  → scheduled:        ${p(stage(scheduled))}`);
  console.log(`  → podIP published: ${p(stage(hasIP))}`);
  console.log(`  → Ready:            ${p(ms)}`);
  console.log(`  all Ready after ${wall.toFixed(0)} ms wall; this process used ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms CPU` +
    ` (API server, control plane, kubelets, CNI in-process) + ${(childCpuMs() - children0).toFixed(0)} ms` +
    ` in exited children (ip, nft, iptables; echo processes still running are not counted)`);
  console.log(`  event loop: utilisation ${(elu.utilization * 100).toFixed(0)}%, delay p99 ` +
    `${(lag.percentile(99) / 1e6).toFixed(0)} ms, max ${(lag.max / 1e6).toFixed(0)} ms` +
    ' (spawn() blocks the loop until the child has exec\'d)');
  console.log(`  CPU per pod: ${(ownMs / COUNT).toFixed(0)} ms in this process, ` +
    `${((ownMs + exitedMs + helpersMs) / COUNT).toFixed(0)} ms with exited children and live ` +
    `helpers (${helpersMs.toFixed(0)} ms in helpers)`);
  const byKind = new Map<string, number>();
  let workloadsMs = 0;
  for (const [pid, ms] of helperCpuMs()) {
    if (helperKind.get(pid) === 'launcher helper') workloadsMs += childrenCpuMs(pid);
    const k = helperKind.get(pid) ?? '?';
    byKind.set(k, (byKind.get(k) ?? 0) + ms - (helpers0.get(pid) ?? 0));
  }
  console.log(`  helpers (incl. what they ran): ${[...byKind].sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(0)} ms`).join(', ')}`);
  console.log(`  workload processes so far (nsenter, then the echo: start, bind, print ready): ` +
    `${workloadsMs.toFixed(0)} ms`);
  report('netns pod startup CPU per pod (kdp process)', ownMs / COUNT, 'ms');
  report('netns pod startup CPU per pod (kdp + tools + helpers)', (ownMs + exitedMs + helpersMs) / COUNT, 'ms');
  report('netns pod startup CPU per pod (all of it, with the workloads)',
    (ownMs + exitedMs + helpersMs + workloadsMs) / COUNT, 'ms');
  report('netns pod creation→Ready p50', percentile(ms, 50), 'ms');
  report(`netns pod creation→Ready p99 (${COUNT} at once on ${NODES} nodes)`, percentile(ms, 99), 'ms', { op: '<=', value: 2000 });
  const exec = buildHostExec();
  const podNs = (await listNetns(exec)).find((n) => n.startsWith(`${prefix}-p-`))!;
  const pid = Number((await exec.run('ip', ['netns', 'pids', podNs])).stdout.trim().split('\n')[0]);
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
  report('echo workload RSS', mib(rss), 'MiB', { op: '<=', value: 30 });
  // RSS counts the shared node binary; what each more pod costs is its private memory.
  const priv = Number(/Private_Dirty:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))![1]) * 1024;
  report('echo workload private dirty memory', mib(priv), 'MiB', { op: '<=', value: 16 });
} finally {
  await cluster.close();
  rmSync(dir, { recursive: true, force: true });
  const left = (await listNetns(buildHostExec())).filter((n) => n.startsWith(`${prefix}-`));
  if (left.length) console.log(`LEFT BEHIND after close: ${left.length} namespaces (${left[0]}, ...)`);
}
