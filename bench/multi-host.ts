// Pod-to-pod throughput and latency across simulated hosts (issue 19), iperf3-style but bounded
// and in Node (no iperf3 on the lab VMs): a TCP sink/echo server runs in the server pod's
// namespace, a client in the client pod's sends seeded amounts of data (throughput) and 64-byte
// ping-pongs (latency). Three paths side by side, each as a ratio to the anchor:
//   anchor   two nodes on one host (one segment): host-gw            (cluster A, n1 → n3)
//   vxlan    two hosts behind a router: VXLAN (auto backend)          (cluster A, n1 → n2)
//   host-gw  two hosts on one L2 segment: host-gw (auto backend)      (cluster B, n1 → n2)
// Needs root. node bin/run-ts.js bench/multi-host.ts [MiB per round, default 48]

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../src/api/types.js';
import { hostPrefixFor } from '../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../src/cluster/up.js';
import type { HostLayout } from '../src/host/hosts.js';
import { buildHostExec } from '../src/host/exec.js';
import { listNetns } from '../src/host/netns.js';
import { hostSpawner, type HostChild } from '../src/host/spawn.js';
import { podNetnsName } from '../src/kubelet/runtime-netns.js';
import { percentile, seededRandom } from './lib-bench.js';

const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const PORT = 5201; // iperf3's
const ROUNDS = 3;
const PINGS = 2000;
const MIB = Number(process.argv[2] ?? 48);

// 'T': sink until the client half-closes, then answer the byte count. 'L': echo 64-byte messages.
const SERVER = `
const net = require('node:net');
net.createServer((s) => {
  let mode, n = 0;
  s.on('data', (d) => {
    if (!mode) { mode = String.fromCharCode(d[0]); d = d.subarray(1); }
    if (mode === 'T') n += d.length; else s.write(d);
  });
  s.on('end', () => { if (mode === 'T') s.end(String(n)); else s.end(); });
  s.on('error', () => {});
}).listen(Number(process.argv[1]), '0.0.0.0', () => console.log('ready'));
`;

const CLIENT = `
const net = require('node:net');
const [host, port, kind, amount] = process.argv.slice(1);
setTimeout(() => { console.error('timeout'); process.exit(2); }, 60000);
const s = net.connect(Number(port), host, () => {
  s.setNoDelay(true);
  if (kind === 'T') {
    const total = Number(amount), chunk = Buffer.alloc(65536, 7);
    let sent = 0; const t0 = process.hrtime.bigint(); let out = '';
    s.write('T');
    const pump = () => { while (sent < total) { const c = chunk.subarray(0, Math.min(chunk.length, total - sent));
      sent += c.length; if (!s.write(c)) return s.once('drain', pump); } s.end(); };
    s.on('data', (d) => { out += d; });
    s.on('end', () => { const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      console.log(JSON.stringify({ bytes: Number(out), ms })); process.exit(0); });
    pump();
  } else {
    const n = Number(amount), msg = Buffer.alloc(64, 1), rtts = [];
    let got = 0, t = 0n;
    const ping = () => { t = process.hrtime.bigint(); s.write(msg); };
    s.write('L'); ping();
    s.on('data', (d) => { got += d.length; while (got >= 64) { got -= 64;
      rtts.push(Number(process.hrtime.bigint() - t) / 1e3); if (rtts.length === n) { console.log(JSON.stringify({ rtts })); process.exit(0); } ping(); } });
  }
});
s.on('error', (e) => { console.error(e.message); process.exit(1); });
`;

interface PathResult { name: string; mbps: number; p50: number; p99: number }

if (process.getuid?.() !== 0) {
  console.log('multi-host: needs root (network namespaces); skipped');
  process.exit(0);
}

const exec = buildHostExec();
const rng = seededRandom(19);
const sizes = Array.from({ length: ROUNDS }, () => Math.round((MIB * (0.75 + 0.5 * rng())) * 1024 * 1024));

async function cluster(hosts: HostLayout, nodes: number): Promise<{ c: RunningCluster; dir: string; prefix: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'kdp-bench-mh-'));
  const paths = dataDirPaths(dir);
  const c = await startCluster({ paths, nodes, port: 0, proxyMode: 'nftables', timeScale: 10, dataPlane: 'netns',
    systemPods: true, dns: false, progress: () => {}, hosts, backend: 'auto' });
  return { c, dir, prefix: hostPrefixFor(paths) };
}

async function podOn(c: RunningCluster, name: string, node: string): Promise<Pod> {
  await c.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: { nodeName: node, containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] } });
  for (let i = 0; i < 600; i++) {
    const p = await c.client.get<Pod>(PODS, name);
    if (p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True')) return p;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`pod ${name} not Ready`);
}

async function startServer(netns: string): Promise<HostChild> {
  const child = hostSpawner.spawn('ip', ['netns', 'exec', netns, process.execPath, '-e', SERVER, String(PORT)],
    { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('ready')) resolve(); });
    child.once('exit', () => reject(new Error('server exited')));
  });
  return child;
}

async function client(netns: string, host: string, kind: 'T' | 'L', amount: number): Promise<unknown> {
  const { stdout } = await exec.run(process.execPath, ['-e', CLIENT, host, String(PORT), kind, String(amount)],
    { netns, timeoutMs: 90_000 });
  return JSON.parse(stdout);
}

async function measure(name: string, prefix: string, from: Pod, to: Pod): Promise<PathResult> {
  const server = await startServer(podNetnsName(prefix, to.metadata.uid!));
  try {
    const src = podNetnsName(prefix, from.metadata.uid!);
    await client(src, to.status!.podIP!, 'T', 1024 * 1024); // warm-up (ARP, conntrack, JIT)
    let bytes = 0;
    let ms = 0;
    for (const size of sizes) {
      const r = await client(src, to.status!.podIP!, 'T', size) as { bytes: number; ms: number };
      if (r.bytes !== size) throw new Error(`${name}: the server counted ${r.bytes} of ${size} bytes`);
      bytes += r.bytes;
      ms += r.ms;
    }
    const { rtts } = await client(src, to.status!.podIP!, 'L', PINGS) as { rtts: number[] };
    const sorted = rtts.slice(100).sort((a, b) => a - b);
    return { name, mbps: (bytes * 8) / (ms * 1000), p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
  } finally {
    server.kill('SIGKILL');
  }
}

const results: PathResult[] = [];
const made: Array<{ c: RunningCluster; dir: string; prefix: string }> = [];
try {
  // Cluster A: two hosts behind a router; n1 and n3 on h1, n2 on h2.
  const a = await cluster({ count: 2, link: 'routed' }, 3);
  made.push(a);
  const [ca, sameHost, otherHost] = [await podOn(a.c, 'client', 'n1'), await podOn(a.c, 'same-host', 'n3'),
    await podOn(a.c, 'other-host', 'n2')];
  results.push(await measure('one host, two nodes (host-gw) [anchor]', a.prefix, ca, sameHost));
  results.push(await measure('two hosts behind a router (vxlan)', a.prefix, ca, otherHost));
  await a.c.close();
  made.shift();
  rmSync(a.dir, { recursive: true, force: true });
  // Cluster B: two hosts on one segment; n1 on h1, n2 on h2.
  const b = await cluster({ count: 2, link: 'l2' }, 2);
  made.push(b);
  results.push(await measure('two hosts on one L2 segment (host-gw)', b.prefix, await podOn(b.c, 'client', 'n1'),
    await podOn(b.c, 'server', 'n2')));
} finally {
  for (const m of made) {
    await m.c.close();
    rmSync(m.dir, { recursive: true, force: true });
  }
}

const anchor = results[0]!;
console.log(`pod-to-pod over TCP, ${ROUNDS} rounds of ${sizes.map((s) => (s / 1048576).toFixed(1)).join(', ')} MiB; ` +
  `${PINGS} ping-pongs of 64 B (first 100 dropped)`);
for (const r of results) {
  console.log(`${r.name}: ${r.mbps.toFixed(0)} Mbit/s (${(r.mbps / anchor.mbps).toFixed(2)}× anchor); ` +
    `RTT p50 ${r.p50.toFixed(0)} µs (${(r.p50 / anchor.p50).toFixed(2)}×), p99 ${r.p99.toFixed(0)} µs (${(r.p99 / anchor.p99).toFixed(2)}×)`);
}
const left = (await listNetns(exec)).filter((n) => made.some((m) => n.startsWith(m.prefix)));
if (left.length) console.log(`warning: left namespaces ${left.join(', ')}`);
