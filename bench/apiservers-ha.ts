// Two API servers on one etcd (`kdp up --etcd 1 --apiservers 2`, virtual, 1 node): how long a
// create through one server takes to reach a watch on the other, side by side with a watch on
// the same server (the anchor: what etcd's watch fan-out alone costs). 200 seeded creates, one
// at a time; p50/p99 of create-acknowledged → event-seen. Target (issue 16): within 100 ms.
//   node bin/run-ts.js bench/apiservers-ha.ts [creates]

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfigMap } from '../src/api/types.js';
import { dataDirPaths } from '../src/cluster/data-dir.js';
import { startCluster } from '../src/cluster/up.js';
import { buildHttpClient } from '../src/client/http-client.js';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { percentile, report, seededRandom } from './lib-bench.js';

if (!existsSync('/usr/bin/etcd')) {
  console.log('apiservers-ha: /usr/bin/etcd missing (apt-get install etcd-server); skipped');
  process.exit(0);
}
const N = Number(process.argv[2] ?? 200);
const CMS = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' } as const;
const dir = mkdtempSync(join(tmpdir(), 'kdp-bench-ha-'));
const cluster = await startCluster({ paths: dataDirPaths(dir), nodes: 1, port: 0, proxyMode: 'iptables', timeScale: 1,
  etcd: 1, apiservers: 2, dns: false, progress: () => {} });
try {
  const kc = loadKubeconfig(join(dir, 'kubeconfig'));
  const [a, b] = cluster.apiServers.map((server) => buildHttpClient({ ...kc, server }));
  const seenAt = { same: new Map<string, number>(), other: new Map<string, number>() };
  const start = await a!.list<ConfigMap>(CMS);
  const rv = start.metadata?.resourceVersion;
  const watches = [
    a!.watch<ConfigMap>(CMS, { resourceVersion: rv }, { onEvent: (e) => { seenAt.same.set(e.object.metadata.name!, performance.now()); } }),
    b!.watch<ConfigMap>(CMS, { resourceVersion: rv }, { onEvent: (e) => { seenAt.other.set(e.object.metadata.name!, performance.now()); } }),
  ];
  await new Promise((r) => setTimeout(r, 300));
  const rnd = seededRandom(16);
  const lag = { same: [] as number[], other: [] as number[] };
  for (let i = 0; i < N; i++) {
    const name = `ha-${i}`;
    await a!.create(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: rnd().toString(36) } });
    const acked = performance.now();
    while (!seenAt.same.has(name) || !seenAt.other.has(name)) await new Promise((r) => setTimeout(r, 1));
    lag.same.push(Math.max(0, seenAt.same.get(name)! - acked));
    lag.other.push(Math.max(0, seenAt.other.get(name)! - acked));
  }
  for (const w of watches) w.stop();
  a!.close();
  b!.close();
  const q = (xs: number[], p: number) => percentile([...xs].sort((x, y) => x - y), p);
  console.log(`apiservers-ha: ${N} creates on server 1; ack → watch event (ms)`);
  console.log(`  watch on the same server:  p50 ${q(lag.same, 50).toFixed(1)}  p99 ${q(lag.same, 99).toFixed(1)}`);
  console.log(`  watch on the other server: p50 ${q(lag.other, 50).toFixed(1)}  p99 ${q(lag.other, 99).toFixed(1)}`);
  report('create on one API server → watch on the other, p99', q(lag.other, 99), 'ms', { op: '<=', value: 100 });
} finally {
  await cluster.close();
  rmSync(dir, { recursive: true, force: true });
}
