// The real streaming path (issue 13), root: a 2-node netns cluster, kubectl → API server →
// kubelet (HTTPS in the node's namespace) → nsenter into the pod. Side by side in one run:
// `kubectl exec POD -- true` (1.27 SPDY, 1.33 WebSocket) against `ip netns exec NS true` and
// against `kubectl get pod` (kubectl's own start-up and round trip), p50/p99 of 30 runs each;
// port-forward download throughput (256 MB from a server in the pod, 3 rounds, medians) through
// kubectl 1.27 (SPDY) and 1.33 (SPDY in WebSocket) against a direct connection from the pod's
// namespace, with the CPU each path costs per MB (kdp's process, kubectl): on a loaded machine
// the throughput varies from run to run, the cost much less. Targets: exec overhead ≤ 50 ms p50
// (exec − get pod); port-forward ≥ 50 % of direct.
//   node bin/run-ts.js bench/kubectl-exec.ts [--port-forward-only]

import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../src/api/types.js';
import { hostPrefixFor } from '../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../src/cluster/data-dir.js';
import { startCluster } from '../src/cluster/up.js';
import { cleanupHost } from '../src/host/cleanup.js';
import { buildHostExec } from '../src/host/exec.js';
import { podNetnsName } from '../src/kubelet/runtime-netns.js';
import { waitFor } from '../test/helpers/cluster.js';
import { percentile, report } from './lib-bench.js';

if (process.getuid?.() !== 0) {
  console.log('kubectl-exec: needs root (network namespaces); skipped');
  process.exit(0);
}
const KUBECTL = (minor: number) => `/usr/lib/google-cloud-sdk/bin/kubectl.1.${minor}`;
const RUNS = 30;
const MB = 256;
/** Download rounds per path; medians are reported (a loaded machine varies run to run). */
const ROUNDS = 3;
const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-bench-exec-')));
const exec = buildHostExec();
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;

const run = (file: string, args: string[]) => new Promise<number>((resolve, reject) => {
  const t = performance.now();
  execFile(file, args, (e) => (e ? reject(e) : resolve(performance.now() - t)));
});
async function times(file: string, args: string[]) {
  await run(file, args);
  const t: number[] = [];
  for (let i = 0; i < RUNS; i++) t.push(await run(file, args));
  t.sort((a, b) => a - b);
  return { p50: percentile(t, 50), p99: percentile(t, 99) };
}
/** A process's CPU time so far (user + system), ms. */
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 1000 / 100;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/** ROUNDS downloads: median MB/s, and the median CPU ms per MB of kdp's process (which also
 *  reads: the bench runs in it) and of `other` (kubectl), a figure load does not skew as much. */
async function rounds(dial: () => Promise<import('node:net').Socket>, other?: number) {
  const speed: number[] = [];
  const kdpCpu: number[] = [];
  const otherCpu: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const me = process.cpuUsage();
    const o = other ? cpuMs(other) : 0;
    speed.push(await download(dial));
    const used = process.cpuUsage(me);
    kdpCpu.push((used.user + used.system) / 1000 / MB);
    if (other) otherCpu.push((cpuMs(other) - o) / MB);
  }
  return { mbps: median(speed), kdpMsPerMB: median(kdpCpu), otherMsPerMB: other ? median(otherCpu) : 0 };
}
/** Reads everything from host:port (via `dial`), MB/s. */
async function download(dial: () => Promise<import('node:net').Socket>): Promise<number> {
  const s = await dial();
  const t = performance.now();
  let bytes = 0;
  await new Promise<void>((resolve, reject) => {
    s.on('data', (d: Buffer) => { bytes += d.length; });
    s.on('end', resolve);
    s.on('error', reject);
  });
  return bytes / 1024 / 1024 / ((performance.now() - t) / 1000);
}

/** A client process of its own (as curl would be) reading everything from 127.0.0.1:port:
 *  MB/s by its own clock. `prefix` runs it elsewhere (`ip netns exec NS`). */
const READER = `const s = require('node:net').connect(Number(process.argv[1]), '127.0.0.1'); let n = 0, t;
  s.on('connect', () => { t = performance.now(); }); s.on('data', (d) => { n += d.length; });
  s.on('end', () => console.log(n / 1048576 / ((performance.now() - t) / 1000)));`;
function clientDownload(prefix: readonly string[], port: number): Promise<number> {
  const argv = [...prefix, process.execPath, '-e', READER, String(port)];
  return new Promise((resolve, reject) => execFile(argv[0]!, argv.slice(1), (e, out) => (e ? reject(e) : resolve(Number(out)))));
}
async function clientRounds(prefix: readonly string[], port: number, other?: number) {
  const speed: number[] = [];
  const kdpCpu: number[] = [];
  const otherCpu: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const me = process.cpuUsage();
    const o = other ? cpuMs(other) : 0;
    speed.push(await clientDownload(prefix, port));
    const used = process.cpuUsage(me);
    kdpCpu.push((used.user + used.system) / 1000 / MB);
    if (other) otherCpu.push((cpuMs(other) - o) / MB);
  }
  return { mbps: median(speed), kdpMsPerMB: median(kdpCpu), otherMsPerMB: other ? median(otherCpu) : 0 };
}

const cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'nftables', timeScale: 5, dataPlane: 'netns', progress: () => {} });
try {
  await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' },
    spec: { nodeName: 'n2', containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] } } as Pod);
  const pod = await waitFor(async () => {
    const p = await cluster.client.get<Pod>(PODS, 'web');
    return p.status?.containerStatuses?.[0]?.ready ? p : undefined;
  }, 30_000, 'web ready');
  const ns = podNetnsName(hostPrefixFor(paths), pod.metadata.uid!);
  const kc = ['--kubeconfig', paths.kubeconfig];
  if (!process.argv.includes('--port-forward-only')) {
    const base = await times('ip', ['netns', 'exec', ns, 'true']);
    console.log(`ip netns exec NS true                       p50 ${base.p50.toFixed(1)} ms  p99 ${base.p99.toFixed(1)} ms`);
    for (const minor of [27, 33]) {
      const get = await times(KUBECTL(minor), [...kc, 'get', 'pod', 'web', '-o', 'name']);
      const ex = await times(KUBECTL(minor), [...kc, 'exec', 'web', '--', 'true']);
      console.log(`kubectl 1.${minor} get pod web                     p50 ${get.p50.toFixed(1)} ms  p99 ${get.p99.toFixed(1)} ms`);
      console.log(`kubectl 1.${minor} exec web -- true                p50 ${ex.p50.toFixed(1)} ms  p99 ${ex.p99.toFixed(1)} ms`);
      report(`exec overhead over kubectl get pod, 1.${minor} (p50)`, ex.p50 - get.p50, 'ms', { op: '<=', value: 50 });
      report(`exec over ip netns exec, 1.${minor} (p50)`, ex.p50 - base.p50, 'ms');
    }
  }
  // A server in the pod that sends MB megabytes to each connection.
  const src = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e',
    `const b = Buffer.alloc(1 << 20, 97); require('node:net').createServer((s) => { let n = ${MB};
      const more = () => { while (n > 0) { n--; if (!s.write(b)) { s.once('drain', more); return; } } s.end(); }; more();
    }).listen(9000, '127.0.0.1', () => console.log('up'));`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((r) => src.stdout!.once('data', r));
  const { netnsSockets } = await import('../src/host/netns-socket.js');
  const socks = netnsSockets();
  // Directly: a socket made inside the pod's namespace (its loopback), no kubelet in between.
  const direct = await rounds(() => socks.connect(ns, '127.0.0.1', 9000));
  console.log(`download ${MB} MB ×${ROUNDS}, medians: direct (pod loopback) ${direct.mbps.toFixed(0)} MB/s, ` +
    `kdp process ${direct.kdpMsPerMB.toFixed(2)} ms CPU/MB (the reader)`);
  // The same with the reader as a process of its own (kdp's thread then carries only the path).
  const directClient = await clientRounds(['ip', 'netns', 'exec', ns], 9000);
  console.log(`  client process in the pod's namespace: direct ${directClient.mbps.toFixed(0)} MB/s`);
  for (const minor of [27, 33]) {
    const pf = spawn(KUBECTL(minor), [...kc, 'port-forward', 'pod/web', '19000:9000'], { stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise((r) => pf.stdout!.once('data', r));
    const via = await rounds(() => new Promise((resolve, reject) => {
      const s = connect(19000, '127.0.0.1');
      s.once('connect', () => resolve(s));
      s.once('error', reject);
    }), pf.pid);
    const viaClient = await clientRounds([], 19000, pf.pid);
    pf.kill();
    console.log(`  kubectl 1.${minor} port-forward ${via.mbps.toFixed(0)} MB/s, kdp process ${via.kdpMsPerMB.toFixed(2)} ` +
      `ms CPU/MB, kubectl ${via.otherMsPerMB.toFixed(2)} ms CPU/MB`);
    report(`port-forward / direct throughput, kubectl 1.${minor}`, via.mbps / direct.mbps, 'ratio', { op: '>=', value: 0.5 });
    console.log(`  client process: kubectl 1.${minor} port-forward ${viaClient.mbps.toFixed(0)} MB/s, kdp process ` +
      `${viaClient.kdpMsPerMB.toFixed(2)} ms CPU/MB, kubectl ${viaClient.otherMsPerMB.toFixed(2)} ms CPU/MB`);
    report(`port-forward / direct throughput, client processes, kubectl 1.${minor}`, viaClient.mbps / directClient.mbps,
      'ratio', { op: '>=', value: 0.5 });
  }
  socks.close();
  src.kill();
} finally {
  await cluster.close();
  await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
}
