// pods/log through the kubelet (issue 13): `kubectl logs POD` (kubectl → API server → the node's
// kubelet over HTTPS → the container's CRI log file) against `kubectl get pod POD` on the same
// virtual cluster (kubectl's own start-up and one API round trip), p50/p99 of 30 runs each,
// kubectl 1.33; then the same for a 5,000-line log (`--tail=-1`, ~0.3 MB) to show the reading
// cost. The ratio logs/get says what the extra hop costs. No target is set by the issue.
//   node bin/run-ts.js bench/kubelet-logs.ts

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../src/api/types.js';
import { dataDirPaths } from '../src/cluster/data-dir.js';
import { startCluster } from '../src/cluster/up.js';
import { fileLogStore, nodeDirOf } from '../src/kubelet/container-log-files.js';
import { waitFor } from '../test/helpers/cluster.js';
import { percentile, report } from './lib-bench.js';

const KUBECTL = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33';
if (!existsSync(KUBECTL)) {
  console.log(`kubelet-logs: ${KUBECTL} missing; skipped`);
  process.exit(0);
}
const RUNS = 30;
const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-bench-logs-')));
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;

const run = (args: string[]) => new Promise<number>((resolve, reject) => {
  const t = performance.now();
  execFile(KUBECTL, ['--kubeconfig', paths.kubeconfig, ...args], { maxBuffer: 64 << 20 },
    (e) => (e ? reject(e) : resolve(performance.now() - t)));
});
async function times(args: string[]) {
  await run(args);
  const t: number[] = [];
  for (let i = 0; i < RUNS; i++) t.push(await run(args));
  t.sort((a, b) => a - b);
  return { p50: percentile(t, 50), p99: percentile(t, 99) };
}

const cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'iptables', timeScale: 20, dns: false,
  progress: () => {} });
try {
  for (const name of ['short', 'long']) {
    await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name },
      spec: { containers: [{ name: 'c', image: 'kdp/echo' }] } } as Pod);
  }
  const long = await waitFor(async () => {
    const p = await cluster.client.get<Pod>(PODS, 'long');
    return p.status?.phase === 'Running' ? p : undefined;
  }, 30_000, 'pods running');
  const w = fileLogStore(nodeDirOf(paths.root, 'n1'))
    .open({ namespace: 'default', name: 'long', uid: long.metadata.uid! }, 'c', 0);
  for (let i = 0; i < 5000; i++) w.write('stdout', `line ${i} ${'x'.repeat(48)}\n`);
  w.close();
  const get = await times(['get', 'pod', 'short']);
  const logs = await times(['logs', 'short']);
  const big = await times(['logs', 'long']);
  report('kubectl get pod (p50)', get.p50, 'ms');
  report('kubectl get pod (p99)', get.p99, 'ms');
  report('kubectl logs, 2 lines (p50)', logs.p50, 'ms');
  report('kubectl logs, 2 lines (p99)', logs.p99, 'ms');
  report('kubectl logs, 5,000 lines (p50)', big.p50, 'ms');
  report('kubectl logs, 5,000 lines (p99)', big.p99, 'ms');
  report('logs / get pod (p50)', logs.p50 / get.p50, 'ratio');
  report('logs via the kubelet over get pod (p50)', logs.p50 - get.p50, 'ms');
} finally {
  await cluster.close();
}
