// Cluster DNS throughput (issue 14): one kdp DNS server — the `kdp/dns` program the coredns pods
// run (bin/kdp-dns.js, kubeadm's Corefile, watching a kdp API server) — against dnsmasq
// (Debian's dnsmasq-base) answering the same names from a hosts file, side by side in one run:
// both on loopback of the same (host) namespace, each its own process, the same load generator
// process (bench/dns-load.mjs: 50 UDP clients, one query outstanding each, seeded names) for
// 5 s after 1 s of warm-up, alternated over three rounds each (median reported).
// Target: ≥ 1.0× dnsmasq's queries/s at a p99 no worse than its.
//   node bin/run-ts.js bench/dns.ts

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dataDirPaths } from '../src/cluster/data-dir.js';
import { startCluster } from '../src/cluster/up.js';
import { report, seededRandom } from './lib-bench.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVICES = 200;
const NAMESPACES = ['default', 'shop', 'db', 'web'];
const CLIENTS = 50;
const DURATION = 5000;
const WARMUP = 1000;
const ROUNDS = 3;

interface Load { qps: number; p50: number; p99: number; answered: number; lost: number; rcodes: Record<string, number> }

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    s.bind(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

function load(port: number, namesFile: string, seed: number): Promise<Load> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(ROOT, 'bench/dns-load.mjs'), '127.0.0.1', String(port), String(CLIENTS),
      String(DURATION), String(WARMUP), String(seed), namesFile], { timeout: 60_000 }, (e, out) => {
      if (e) reject(e); else resolve(JSON.parse(out) as Load);
    });
  });
}

async function answers(port: number, name: string): Promise<boolean> {
  const { default: packet } = await import('dns-packet');
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    const t = setTimeout(() => { s.close(); resolve(false); }, 300);
    s.on('message', (m) => {
      clearTimeout(t);
      s.close();
      resolve(packet.decode(m).answers?.length === 1);
    });
    s.send(packet.encode({ type: 'query', id: 7, questions: [{ type: 'A', name }] }), port, '127.0.0.1');
  });
}

async function until(what: string, f: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 30_000;
  while (!(await f())) {
    if (Date.now() > end) throw new Error(`bench/dns: ${what} did not come up`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = mkdtempSync(join(tmpdir(), 'kdp-bench-dns-'));
chmodSync(dir, 0o755);
const paths = dataDirPaths(join(dir, 'data'));
const cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'iptables', timeScale: 20,
  dataPlane: 'virtual', progress: () => undefined });
const children: ChildProcess[] = [];
try {
  const rng = seededRandom(14);
  for (const ns of NAMESPACES.slice(1)) {
    await cluster.client.create({ group: '', version: 'v1', resource: 'namespaces' },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  }
  for (let i = 0; i < SERVICES; i++) {
    const ns = NAMESPACES[Math.floor(rng() * NAMESPACES.length)]!;
    await cluster.client.create({ group: '', version: 'v1', resource: 'services', namespace: ns },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}` },
        spec: { ports: [{ port: 80 }], selector: { app: `a${i}` } } });
  }
  const svcs = (await cluster.client.list<any>({ group: '', version: 'v1', resource: 'services' })).items;
  const records = svcs.map((s) => [`${s.metadata.name}.${s.metadata.namespace}.svc.cluster.local`, s.spec.clusterIP] as const);
  const namesFile = join(dir, 'names');
  writeFileSync(namesFile, `${records.map(([n]) => n).join('\n')}\n`);
  const hostsFile = join(dir, 'hosts');
  writeFileSync(hostsFile, records.map(([n, ip]) => `${ip} ${n}`).join('\n') + '\n', { mode: 0o644 });
  const corefile = join(dir, 'Corefile');
  // kubeadm's Corefile without the health/ready/metrics listeners (fixed ports) and forwarding.
  writeFileSync(corefile, ['.:53 {', '    errors', '    kubernetes cluster.local in-addr.arpa ip6.arpa {',
    '       pods insecure', '       fallthrough in-addr.arpa ip6.arpa', '       ttl 30', '    }', '    cache 30',
    '    loop', '    reload', '    loadbalance', '}', ''].join('\n'));

  const kdpPort = await freePort();
  const kdp = spawn(process.execPath, [join(ROOT, 'bin/kdp-dns.js'), '-conf', corefile, '--kubeconfig', paths.kubeconfig,
    '--listen', '127.0.0.1', '--port', String(kdpPort), '--health', '', '--ready', '', '--metrics', ''],
  { stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(kdp);
  const maskPort = await freePort();
  const dnsmasq = spawn('dnsmasq', ['--keep-in-foreground', '--no-hosts', `--addn-hosts=${hostsFile}`, '--no-resolv',
    `--port=${maskPort}`, '--listen-address=127.0.0.1', '--bind-interfaces', '--local-ttl=30', '--user=root',
    '--pid-file=', '--cache-size=10000'], { stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(dnsmasq);
  const probe = records[0]![0];
  await until('kdp-dns', () => answers(kdpPort, probe));
  await until('dnsmasq', () => answers(maskPort, probe));

  const kdpRuns: Load[] = [];
  const maskRuns: Load[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    kdpRuns.push(await load(kdpPort, namesFile, 100 + r));
    maskRuns.push(await load(maskPort, namesFile, 100 + r));
  }
  const k = { qps: median(kdpRuns.map((x) => x.qps)), p99: median(kdpRuns.map((x) => x.p99)),
    p50: median(kdpRuns.map((x) => x.p50)), lost: kdpRuns.reduce((a, x) => a + x.lost, 0) };
  const m = { qps: median(maskRuns.map((x) => x.qps)), p99: median(maskRuns.map((x) => x.p99)),
    p50: median(maskRuns.map((x) => x.p50)), lost: maskRuns.reduce((a, x) => a + x.lost, 0) };
  console.log(`cluster DNS, ${records.length} names, ${CLIENTS} UDP clients, ${ROUNDS}×${DURATION / 1000} s each (median):`);
  console.log(`  kdp-dns:  ${k.qps.toFixed(0)} q/s, p50 ${k.p50.toFixed(2)} ms, p99 ${k.p99.toFixed(2)} ms, lost ${k.lost}`);
  console.log(`  dnsmasq:  ${m.qps.toFixed(0)} q/s, p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms, lost ${m.lost}`);
  console.log(`  rcodes kdp ${JSON.stringify(kdpRuns[0]!.rcodes)}, dnsmasq ${JSON.stringify(maskRuns[0]!.rcodes)}`);
  report('dns: kdp-dns queries/s as a multiple of dnsmasq\'s', k.qps / m.qps, '×', { op: '>=', value: 1 });
  report('dns: kdp-dns p99 as a multiple of dnsmasq\'s', k.p99 / m.p99, '×', { op: '<=', value: 1 });
} finally {
  for (const c of children) c.kill('SIGTERM');
  await cluster.close();
}
