// The real streaming path (issue 13), root: a 2-node netns cluster, kubectl → API server →
// kubelet (HTTPS in the node's namespace) → nsenter into the pod. Side by side in one run:
// `kubectl exec POD -- true` (1.27 SPDY, 1.33 WebSocket) against `ip netns exec NS true` and
// against `kubectl get pod` (kubectl's own start-up and round trip), p50/p99 of 30 runs each;
// port-forward through kubectl 1.27 (SPDY) and 1.33 (SPDY in WebSocket) against a direct
// connection from inside the pod's namespace, each client a process of its own (as curl): the
// download throughput of 256 MB (5 rounds interleaving the three paths, medians of each round's
// ratio to direct, and the CPU each path costs per MB in kdp's process and in kubectl — on a
// loaded machine MB/s swings from run to run, the cost much less), then per-request latency
// (a new connection and a 1 KB answer) and the round trip on an open connection, p50/p99.
// Targets: exec overhead ≤ 50 ms p50
// (exec − get pod); port-forward ≥ 50 % of direct.
//   node bin/run-ts.js bench/kubectl-exec.ts [--port-forward-only]

import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
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
/** BENCH_SCALE=0.1 for a quick run. */
const MB = Math.max(1, Math.round(256 * Number(process.env.BENCH_SCALE ?? 1)));
/** Download rounds per path, interleaved; medians are reported (a loaded machine varies run to run). */
const ROUNDS = 5;
/** Sequential requests and round trips for the latency figures. */
const REQUESTS = 100;
const RTTS = 1000;
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

/** The client is a process of its own (as curl would be), so kdp's thread carries only the path.
 *  `get PORT`: reads everything, prints MB/s by its own clock. `req PORT N`: N sequential
 *  requests, each a new connection that sends a line and reads the 1 KB answer to its end;
 *  `rtt PORT N`: N 64-byte round trips on one connection to an echo server. Both print the
 *  sorted times (ms) as JSON. */
const CLIENT = `const net = require('node:net'); const [mode, port, n] = process.argv.slice(1);
  if (mode === 'get') { const s = net.connect(Number(port), '127.0.0.1'); let b = 0, t;
    s.on('connect', () => { t = performance.now(); }); s.on('data', (d) => { b += d.length; });
    s.on('end', () => console.log(b / 1048576 / ((performance.now() - t) / 1000))); }
  const out = []; const done = () => console.log(JSON.stringify(out.sort((a, b) => a - b)));
  if (mode === 'req') { const one = () => { if (out.length === Number(n)) return done(); const t = performance.now();
    const s = net.connect(Number(port), '127.0.0.1', () => s.write('GET\\n')); s.resume();
    s.on('end', () => { out.push(performance.now() - t); s.destroy(); one(); }); }; one(); }
  if (mode === 'rtt') { const s = net.connect(Number(port), '127.0.0.1'); s.setNoDelay(true); const m = Buffer.alloc(64, 120);
    let t, got = 0; const one = () => { if (out.length === Number(n)) { s.destroy(); return done(); } got = 0; t = performance.now(); s.write(m); };
    s.on('connect', one); s.on('data', (d) => { got += d.length; if (got >= 64) { out.push(performance.now() - t); one(); } }); }`;
function client(prefix: readonly string[], args: string[]): Promise<string> {
  const argv = [...prefix, process.execPath, '-e', CLIENT, ...args];
  return new Promise((resolve, reject) => execFile(argv[0]!, argv.slice(1), (e, out) => (e ? reject(e) : resolve(out))));
}

/** One way to reach the pod's servers: directly from inside its namespace, or through a
 *  running `kubectl port-forward` (whose pid's CPU is counted). */
interface Path { readonly name: string; readonly prefix: readonly string[]; readonly base: number; readonly pid?: number }

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
  // Servers in the pod: 9000 sends MB megabytes to each connection; 9001 answers a request line
  // with 1 KB and closes; 9002 echoes.
  const src = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e',
    `const net = require('node:net'); const b = Buffer.alloc(1 << 20, 97); const k = Buffer.alloc(1024, 98);
    net.createServer((s) => { let n = ${MB};
      const more = () => { while (n > 0) { n--; if (!s.write(b)) { s.once('drain', more); return; } } s.end(); }; more();
    }).listen(9000, '127.0.0.1');
    net.createServer((s) => { s.once('data', () => s.end(k)); s.on('error', () => {}); }).listen(9001, '127.0.0.1');
    net.createServer((s) => { s.setNoDelay(true); s.pipe(s); s.on('error', () => {}); })
      .listen(9002, '127.0.0.1', () => console.log('up'));`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((r) => src.stdout!.once('data', r));
  const routes: Path[] = [{ name: 'direct (a client in the pod\'s namespace)', prefix: ['ip', 'netns', 'exec', ns], base: 9000 }];
  const forwards = [];
  for (const minor of [27, 33]) {
    const base = 19000 + minor * 10;
    const pf = spawn(KUBECTL(minor), [...kc, 'port-forward', 'pod/web', `${base}:9000`, `${base + 1}:9001`, `${base + 2}:9002`],
      { stdio: ['ignore', 'pipe', 'ignore'] });
    forwards.push(pf);
    await new Promise((r) => pf.stdout!.once('data', r));
    routes.push({ name: `kubectl 1.${minor} port-forward`, prefix: [], base, pid: pf.pid });
  }
  // kdp's process is a whole cluster (controllers, probes, metrics): its CPU while idle is
  // measured and taken off each transfer's figure, which is then the path's own cost.
  const idle0 = process.cpuUsage();
  const idleT = performance.now();
  await new Promise((r) => setTimeout(r, 3000));
  const idleUsed = process.cpuUsage(idle0);
  const idleMsPerMs = (idleUsed.user + idleUsed.system) / 1000 / (performance.now() - idleT);
  try {
    // Rounds interleave the paths (in a rotating order), so a change in the machine's load
    // falls on all of them; each round's ratio is to the direct download of the same round.
    const mbps = routes.map((): number[] => []);
    const kdpCpu = routes.map((): number[] => []);
    const kubectlCpu = routes.map((): number[] => []);
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < routes.length; k++) {
        const i = (k + r) % routes.length;
        const p = routes[i]!;
        const me = process.cpuUsage();
        const t = performance.now();
        const other = p.pid ? cpuMs(p.pid) : 0;
        mbps[i]!.push(Number(await client(p.prefix, ['get', String(p.base)])));
        const used = process.cpuUsage(me);
        kdpCpu[i]!.push(((used.user + used.system) / 1000 - idleMsPerMs * (performance.now() - t)) / MB);
        if (p.pid) kubectlCpu[i]!.push((cpuMs(p.pid) - other) / MB);
      }
    }
    const ratio = (i: number) => median(mbps[i]!.map((v, r) => v / mbps[0]![r]!));
    console.log(`download ${MB} MB ×${ROUNDS} rounds, interleaved; medians (load average ${loadavg()[0]!.toFixed(1)}; ` +
      `kdp's process idles at ${(idleMsPerMs * 1000).toFixed(0)} ms CPU/s, taken off):`);
    routes.forEach((p, i) => console.log(`  ${p.name.padEnd(44)} ${median(mbps[i]!).toFixed(0).padStart(5)} MB/s` +
      (i ? `  = ${ratio(i).toFixed(2)} of direct; kdp process ${median(kdpCpu[i]!).toFixed(2)} ms CPU/MB, ` +
        `kubectl ${median(kubectlCpu[i]!).toFixed(2)} ms CPU/MB` : '')));
    for (let i = 1; i < routes.length; i++) {
      report(`${routes[i]!.name} / direct throughput`, ratio(i), 'ratio', { op: '>=', value: 0.5 });
    }
    // Latency side by side: a request on a new connection (as curl through the forward), and a
    // round trip on an open one.
    console.log(`latency, ${REQUESTS} requests (new connection, 1 KB answer) / ${RTTS} round trips (64 B, one connection):`);
    for (const p of routes) {
      const req = JSON.parse(await client(p.prefix, ['req', String(p.base + 1), String(REQUESTS)])) as number[];
      const rtt = JSON.parse(await client(p.prefix, ['rtt', String(p.base + 2), String(RTTS)])) as number[];
      console.log(`  ${p.name.padEnd(44)} request p50 ${percentile(req, 50).toFixed(2)} ms  p99 ` +
        `${percentile(req, 99).toFixed(2)} ms   round trip p50 ${percentile(rtt, 50).toFixed(3)} ms  p99 ${percentile(rtt, 99).toFixed(3)} ms`);
    }
  } finally {
    for (const pf of forwards) pf.kill();
    src.kill();
  }
} finally {
  await cluster.close();
  await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
  rmSync(paths.root, { recursive: true, force: true });
}
