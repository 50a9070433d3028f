// netns mode: pod creation → Ready through the whole cluster (API server, scheduler, kubelet,
// CNI ADD, workload start), and the memory of one echo workload process. Needs root.
// node bin/run-ts.js bench/netns-pod-startup.ts

import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../src/api/types.js';
import { dataDirPaths } from '../src/cluster/data-dir.js';
import { startCluster } from '../src/cluster/up.js';
import { buildHostExec } from '../src/host/exec.js';
import { listNetns } from '../src/host/netns.js';
import { mib, percentile, report } from './lib-bench.js';

const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const COUNT = 6;

if (process.getuid?.() !== 0) {
  console.log('netns-pod-startup: needs root; skipped');
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'kdp-bench-netns-'));
const paths = dataDirPaths(dir);
const cluster = await startCluster({
  paths, nodes: 2, port: 0, proxyMode: 'iptables', timeScale: 1, dataPlane: 'netns', progress: () => {},
});
try {
  const created = new Map<string, number>();
  const ready = new Map<string, number>();
  const scheduled = new Map<string, number>();
  const hasIP = new Map<string, number>();
  for (let i = 0; i < COUNT; i++) {
    const name = `echo-${i}`;
    await cluster.client.create(PODS, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
      spec: { containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] },
    } as Pod);
    created.set(name, performance.now());
  }
  while (ready.size < COUNT) {
    for (const p of (await cluster.client.list<Pod>(PODS)).items) {
      const n = p.metadata.name!;
      if (p.spec?.nodeName && !scheduled.has(n)) scheduled.set(n, performance.now());
      if (p.status?.podIP && !hasIP.has(n)) hasIP.set(n, performance.now());
      const ok = p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      if (ok && !ready.has(p.metadata.name!)) ready.set(p.metadata.name!, performance.now());
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  const ms = [...ready].map(([n, t]) => t - created.get(n)!).sort((a, b) => a - b);
  console.log(`per pod creation→Ready (ms): ${ms.map((m) => m.toFixed(0)).join(' ')}`);
  const stage = (m: Map<string, number>) => [...created].map(([n, t]) => ((m.get(n) ?? NaN) - t).toFixed(0)).join(' ');
  console.log(`  → scheduled (ms): ${stage(scheduled)}`);
  console.log(`  → podIP published (ms): ${stage(hasIP)}`);
  report('netns pod creation→Ready p50', percentile(ms, 50), 'ms', { op: '<=', value: 1000 });
  report('netns pod creation→Ready max (6 at once)', ms[ms.length - 1]!, 'ms', { op: '<=', value: 3000 });
  const exec = buildHostExec();
  const podNs = (await listNetns(exec)).find((n) => n.includes('-p-'))!;
  const pid = Number((await exec.run('ip', ['netns', 'pids', podNs])).stdout.trim().split('\n')[0]);
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
  report('echo workload RSS', mib(rss), 'MiB', { op: '<=', value: 50 });
  // RSS counts the shared node binary; what each more pod costs is its private memory.
  const priv = Number(/Private_Dirty:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))![1]) * 1024;
  report('echo workload private dirty memory', mib(priv), 'MiB', { op: '<=', value: 16 });
} finally {
  await cluster.close();
  rmSync(dir, { recursive: true, force: true });
}
