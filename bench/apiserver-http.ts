// API server throughput and latency over HTTPS, as deployed: `kdp apiserver` (startApiServer:
// TLS, token authn, RBAC, admission, durable embedded store with group commit + fsync) runs in
// a child process of its own, driven by a raw-TLS keep-alive load generator in this process.
// After a warm-up: pod creates (as a ReplicaSet controller sends them) at 1 and 50 clients,
// ConfigMap creates, gets and 500-pod lists at 1 and 50 clients, and watches (1 watcher, then
// 100) checked for loss, duplication and order, with create-to-event latency.
// Every phase prints, apart: the server's CPU per operation (every thread), its event-loop
// utilisation, GC pauses and loop delay, its group commits (size, write+fdatasync time as the
// store sees it), the load generator's CPU, and the CPU the rest of the machine used meanwhile
// (from /proc/stat), since on a shared machine that decides the wall-clock figures.
// Targets: ≥ 3,000 creates/s and p99 ≤ 20 ms at 50 clients; the figure the server controls is
// its CPU per create (≤ ~300 µs leaves one core enough for 3,000/s).
//   node bin/run-ts.js bench/apiserver-http.ts        (BENCH_SCALE=0.2 for a quick run;
//   BENCH_CPU_PROF=/tmp/dir writes a .cpuprofile of the server during the measured 50-client
//   pod creates there (with BENCH_HEAP_PROF=1 also a sampled .heapprofile of what they
//   allocate); BENCH_ONLY=creates stops after them; the server runs with kdp's own node flags
//   (src/cli/node-flags.ts) unless BENCH_SERVER_NODE_FLAGS="..." gives others ("" for none))

import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import type { TLSSocket } from 'node:tls';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { join } from 'node:path';
import { KDP_NODE_FLAGS } from '../src/cli/node-flags.js';
import { FLUSH_BUCKETS_MS, type CommitStats } from '../src/store/types.js';
import { percentile, report, seededRandom } from './lib-bench.js';

const SCALE = Number(process.env.BENCH_SCALE ?? '1');
const n = (x: number) => Math.max(1, Math.round(x * SCALE));

interface Hello { url: string; ca: string; token: string }
/** What the server process says about itself since the previous question. */
interface ServerStats {
  /** CPU time of the whole process (every thread: the fsyncs run on libuv's pool), µs. */
  cpuUs: number;
  /** Share of wall time the event loop was busy. */
  elu: number;
  /** Pauses: minor (scavenges) and major (mark-compact) counted apart. */
  gc: { count: number; ms: number; maxMs: number; major: number; majorMs: number };
  /** Event-loop delay (a 10 ms-resolution timer's lateness), ms. */
  delay: { p99: number; max: number };
  /** Time in the server: request head parsed → response handed to the socket, ms. */
  inServer: { p50: number; p99: number };
  /** The store's group commits in the interval (write + fdatasync per batch). */
  commits: CommitStats;
}
type StatsReply = { stats: ServerStats };

/** Child side: start the API server, report where it listens, answer CPU questions. */
async function serverChild(dir: string): Promise<void> {
  const { startApiServer } = await import('../src/apiserver/start.js');
  const srv = await startApiServer({ dataDir: dir, port: 0 });
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  const inServer: number[] = [];
  srv.server.app.server.prependListener('request', (_req, res) => {
    const t0 = performance.now();
    res.once('finish', () => inServer.push(performance.now() - t0));
  });
  const stats = serverStatsProbe(() => srv.store.stats().commits!, inServer);
  process.on('message', (m: string) => {
    if (m === 'stats') process.send!({ stats: stats() });
    if (m === 'stop') void srv.close().then(() => process.exit(0));
    if (m === 'prof-start') {
      session.connect();
      void session.post('Profiler.enable').then(() => session.post('Profiler.start'));
      if (process.env.BENCH_HEAP_PROF) {
        void session.post('HeapProfiler.enable').then(() =>
          session.post('HeapProfiler.startSampling', { samplingInterval: 4096,
            includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }));
      }
    }
    if (m === 'prof-stop') {
      void session.post('Profiler.stop').then(async ({ profile }) => {
        const { writeFile } = await import('node:fs/promises');
        const file = join(process.env.BENCH_CPU_PROF!, `server-${Date.now()}.cpuprofile`);
        await writeFile(file, JSON.stringify(profile));
        console.log(`server profile: ${file}`);
        if (process.env.BENCH_HEAP_PROF) {
          const heap = await session.post('HeapProfiler.stopSampling');
          const hfile = file.replace(/\.cpuprofile$/, '.heapprofile');
          await writeFile(hfile, JSON.stringify(heap.profile));
          console.log(`server allocation profile: ${hfile}`);
        }
        session.disconnect();
        process.send!({ profiled: file });
      });
    }
  });
  const hello: Hello = { url: srv.url, ca: srv.pki.caCertPem, token: srv.pki.adminToken };
  process.send!(hello);
}

/** Returns a function giving the server's stats since its previous call. */
function serverStatsProbe(commits: () => CommitStats, inServer: number[]):
  () => ServerStats {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const none = () => ({ count: 0, ms: 0, maxMs: 0, major: 0, majorMs: 0 });
  let gc = none();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.count++;
      gc.ms += e.duration;
      gc.maxMs = Math.max(gc.maxMs, e.duration);
      if ((e.detail as { kind: number }).kind !== constants.NODE_PERFORMANCE_GC_MINOR) {
        gc.major++;
        gc.majorMs += e.duration;
      }
    }
  }).observe({ entryTypes: ['gc'] });
  let cpu = process.cpuUsage();
  let elu = performance.eventLoopUtilization();
  let com = commits();
  return () => {
    const now = commits();
    const c = process.cpuUsage(cpu);
    const e = performance.eventLoopUtilization(elu);
    const sorted = inServer.splice(0).sort((a, b) => a - b);
    const out: ServerStats = { cpuUs: c.user + c.system, elu: e.utilization, gc,
      delay: { p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 },
      inServer: { p50: percentile(sorted, 50), p99: percentile(sorted, 99) },
      commits: { batches: now.batches - com.batches, records: now.records - com.records,
        flushMs: now.flushMs - com.flushMs,
        flushBuckets: now.flushBuckets.map((n, i) => n - com.flushBuckets[i]!) } };
    com = now;
    cpu = process.cpuUsage();
    elu = performance.eventLoopUtilization();
    gc = none();
    delay.reset();
    return out;
  };
}

/** Busy and total jiffies of the whole machine (all cores), from /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'latin1').split('\n')[0]!.trim().split(/\s+/).slice(1)
    .map(Number);
  const idle = f[3]! + f[4]!;
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

class ServerProcess {
  private waiters: ((r: StatsReply) => void)[] = [];
  constructor(readonly child: ChildProcess, readonly hello: Hello) {
    child.on('message', (m: StatsReply) => { if ('stats' in m) this.waiters.shift()?.(m); });
  }

  static async start(dir: string): Promise<ServerProcess> {
    // As deployed: bin/kdp.js runs with KDP_NODE_FLAGS; BENCH_SERVER_NODE_FLAGS replaces them.
    const flags = process.env.BENCH_SERVER_NODE_FLAGS?.split(/\s+/).filter(Boolean) ??
      KDP_NODE_FLAGS;
    const child = fork('bin/run-ts.js', ['bench/apiserver-http.ts', '--server', dir], {
      execArgv: [...process.execArgv, ...flags], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const hello = await new Promise<Hello>((resolve, reject) => {
      child.once('message', (m: Hello) => resolve(m));
      child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    });
    return new ServerProcess(child, hello);
  }

  /** The server's stats since the previous call. */
  async stats(): Promise<ServerStats> {
    const r = await new Promise<StatsReply>((resolve) => {
      this.waiters.push(resolve);
      this.child.send('stats');
    });
    return r.stats;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.send('stop');
    });
  }
}

/**
 * The load generator: one keep-alive TLS connection per concurrent client, requests written as
 * prepared bytes and responses read by Content-Length (the server always sends it for these
 * answers), so that the generator costs a fraction of what node's http client would.
 */
class RawConnection {
  /** Bytes received and not yet consumed, as chunks (a big list answer comes in many). */
  private chunks: Buffer[] = [];
  private have = 0;
  /** Total length of the response being read, once its head is complete. */
  private need = 0;
  private status = 0;
  private waiting: { resolve: (status: number) => void; reject: (e: Error) => void } | undefined;
  private constructor(private readonly sock: TLSSocket) {
    sock.on('data', (d: Buffer) => this.onData(d));
    sock.on('error', (e) => this.waiting?.reject(e));
    sock.on('close', () => this.waiting?.reject(new Error('connection closed')));
  }

  static open(url: URL, ca: string): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const sock = tlsConnect({ host: url.hostname, port: Number(url.port), ca,
        servername: 'localhost' }, () => resolve(new RawConnection(sock)));
      sock.once('error', reject);
    });
  }

  send(head: string, body?: Buffer): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.sock.write(body ? Buffer.concat([Buffer.from(head), body]) : head);
    });
  }

  private onData(d: Buffer): void {
    this.chunks.push(d);
    this.have += d.length;
    if (this.need === 0) {
      const buf = this.chunks.length > 1 ? Buffer.concat(this.chunks, this.have) : d;
      this.chunks = [buf];
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      const m = /\r\ncontent-length: *(\d+)/i.exec(head);
      if (!m) throw new Error(`response without content-length: ${head}`);
      this.need = end + 4 + Number(m[1]);
      this.status = Number(head.slice(9, 12));
    }
    if (this.have < this.need) return;
    const rest = this.have > this.need ?
      Buffer.concat(this.chunks, this.have).subarray(this.need) : undefined;
    this.chunks = rest ? [rest] : [];
    this.have = rest?.length ?? 0;
    this.need = 0;
    const w = this.waiting!;
    this.waiting = undefined;
    w.resolve(this.status);
  }

  close(): void { this.sock.destroy(); }
}

async function client(hello: Hello, conns: number) {
  const url = new URL(hello.url);
  const pool = await Promise.all(Array.from({ length: conns }, () =>
    RawConnection.open(url, hello.ca)));
  const fixed = `Host: ${url.host}\r\nAuthorization: Bearer ${hello.token}\r\n` +
    'User-Agent: kdp-bench/1\r\nAccept: application/json\r\n';
  /** `conn` picks the connection (each concurrent client keeps its own). */
  const call = async (conn: number, method: string, path: string, body?: unknown) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const head = `${method} ${path} HTTP/1.1\r\n${fixed}` + (payload ?
      `Content-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n` :
      '\r\n');
    const status = await pool[conn % pool.length]!.send(head, payload);
    if (status >= 300) throw new Error(`${method} ${path}: ${status}`);
    return status;
  };
  return { call, close: () => { for (const c of pool) c.close(); } };
}

interface Phase { rate: number; p50: number; p99: number; serverUs: number; clientUs: number;
  /** Machine CPU (both cores) used by neither the server nor the load generator, in cores. */
  otherCores: number }

async function run(
  srv: ServerProcess, label: string, total: number, conc: number,
  op: (i: number, worker: number) => Promise<unknown>,
): Promise<Phase> {
  const lat: number[] = [];
  let next = 0;
  await srv.stats();
  const c0 = process.cpuUsage();
  const m0 = machineTicks();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: conc }, async (_, worker) => {
    for (let i = next++; i < total; i = next++) {
      const s = performance.now();
      await op(i, worker);
      lat.push(performance.now() - s);
    }
  }));
  const secs = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const m = machineTicks();
  const st = await srv.stats();
  const serverUs = st.cpuUs / total;
  const clientUs = (c.user + c.system) / total;
  const machineCores = (m.busy - m0.busy) / (m.total - m0.total) * cpus().length;
  const otherCores = Math.max(0, machineCores - (st.cpuUs + c.user + c.system) / 1e6 / secs);
  lat.sort((a, b) => a - b);
  const out = { rate: total / secs, p50: percentile(lat, 50), p99: percentile(lat, 99), serverUs,
    clientUs, otherCores };
  console.log(`${label.padEnd(26)} ${String(total).padStart(6)} ops ` +
    `${out.rate.toFixed(0).padStart(6)}/s  p50 ${out.p50.toFixed(2)} ms  ` +
    `p99 ${out.p99.toFixed(2)} ms  max ${lat.at(-1)!.toFixed(1)} ms\n` +
    `${''.padEnd(28)}server: cpu ${serverUs.toFixed(0)} µs/op, event loop busy ` +
    `${(st.elu * 100).toFixed(0)} %, gc ${st.gc.count}× ${st.gc.ms.toFixed(0)} ms ` +
    `(${st.gc.major}× ${st.gc.majorMs.toFixed(0)} ms major; max ${st.gc.maxMs.toFixed(1)}), ` +
    `loop delay p99 ${st.delay.p99.toFixed(1)} ms ` +
    `max ${st.delay.max.toFixed(1)}; time in server p50 ${st.inServer.p50.toFixed(2)} ms ` +
    `p99 ${st.inServer.p99.toFixed(2)} ms\n${''.padEnd(28)}${commitLine(st.commits, secs)}\n` +
    `${''.padEnd(28)}load generator cpu ` +
    `${clientUs.toFixed(0)} µs/op; rest of the machine ${otherCores.toFixed(2)} cores busy`);
  return out;
}

function commitLine(c: CommitStats, secs: number): string {
  if (c.batches === 0) return 'store: no writes';
  return `store: ${c.batches} group commits of ${(c.records / c.batches).toFixed(1)} writes, ` +
    `write+fdatasync mean ${(c.flushMs / c.batches).toFixed(1)} ms, p50 ` +
    `${bucketPercentile(c, 50)} p99 ${bucketPercentile(c, 99)}, busy ` +
    `${(c.flushMs / secs / 10).toFixed(0)} % of the time`;
}

/** The bucket holding the p-th percentile flush, as `≤ N ms`. */
function bucketPercentile(c: CommitStats, p: number): string {
  let seen = 0;
  for (let i = 0; i < c.flushBuckets.length; i++) {
    seen += c.flushBuckets[i]!;
    if (seen >= (p / 100) * c.batches) {
      const b = FLUSH_BUCKETS_MS[i]!;
      return b === Infinity ? `> ${FLUSH_BUCKETS_MS[i - 1]} ms` : `≤ ${b} ms`;
    }
  }
  return '-';
}

interface WatchCheck { count: number; lastRv: number; names: Set<string>; bad: string[];
  /** ms from the create's request being sent to its event arriving here. */
  lat: number[]; done: Promise<void> }

/** A watcher checking loss, duplication and order; `sentAt` holds each create's send time. */
function watch(hello: Hello, path: string, expect: number, sentAt: Map<string, number>):
  WatchCheck {
  const st: WatchCheck = { count: 0, lastRv: 0, names: new Set(), bad: [], lat: [],
    done: Promise.resolve() };
  st.done = new Promise((resolve, reject) => {
    const req = request(hello.url + path, { agent: false, ca: hello.ca,
      headers: { authorization: `Bearer ${hello.token}` } }, (res) => {
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        buf += d;
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          const ev = JSON.parse(buf.slice(0, i)) as { object: { metadata: { name: string;
            resourceVersion: string } } };
          buf = buf.slice(i + 1);
          const rv = Number(ev.object.metadata.resourceVersion);
          st.lat.push(performance.now() - sentAt.get(ev.object.metadata.name)!);
          if (rv <= st.lastRv) st.bad.push(`out of order ${rv} after ${st.lastRv}`);
          if (st.names.has(ev.object.metadata.name)) st.bad.push(`dup ${ev.object.metadata.name}`);
          st.names.add(ev.object.metadata.name);
          st.lastRv = rv;
          if (++st.count === expect) { req.destroy(); resolve(); }
        }
      });
    });
    req.on('error', (e) => (st.count === expect ? resolve() : reject(e)));
    req.end();
  });
  return st;
}

/** A pod as a ReplicaSet controller creates it (~0.9 KB of JSON). */
function podBody(rnd: () => number, i: number) {
  const hash = Math.floor(rnd() * 0xffffffff).toString(16).padStart(8, '0');
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: `web-${hash}-${i}`, labels: { app: 'web', 'pod-template-hash': hash },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `web-${hash}`,
        uid: `${hash}-0000-4000-8000-${hash}0000`, controller: true,
        blockOwnerDeletion: true }] },
    spec: { containers: [{ name: 'web', image: 'nginx:1.27',
      ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }],
      resources: { limits: { cpu: '500m', memory: '256Mi' },
        requests: { cpu: '100m', memory: '128Mi' } },
      env: [{ name: 'MODE', value: 'bench' }] }] },
  };
}

const cm = (name: string) => ({ metadata: { name, labels: { app: 'bench' } },
  data: { k: 'v'.repeat(64) } });

type Call = Awaited<ReturnType<typeof client>>['call'];

/** ConfigMap creates, gets and pod lists at 1 and 50 clients, then watches. */
async function otherPhases(srv: ServerProcess, call: Call, c50: Phase): Promise<void> {
  const m50 = await run(srv, 'configmap create, 50', n(10000), 50,
    (i, w) => call(w, 'POST', '/api/v1/namespaces/c50/configmaps', cm(`c${i}`)));
  const get = (i: number, w: number) =>
    call(w, 'GET', `/api/v1/namespaces/c50/configmaps/c${i % 200}`);
  await run(srv, 'configmap get, 1 client', n(2000), 1, get);
  const g50 = await run(srv, 'configmap get, 50', n(20000), 50, get);
  const list = (_: number, w: number) => call(w, 'GET', '/api/v1/namespaces/b50/pods?limit=500');
  await run(srv, 'list 500 pods, 1 client', n(30), 1, list);
  await run(srv, 'list 500 pods, 50 clients', n(100), 50, list);
  const w1 = await watchPhase(srv, call, 1, 1, n(500), 'w1');
  const w100 = await watchPhase(srv, call, 100, 50, n(10000), 'w');
  console.log('--- other ratios');
  report('server CPU per configmap create', Math.round(m50.serverUs), 'µs',
    { op: '<=', value: 300 });
  report('server CPU per get', Math.round(g50.serverUs), 'µs');
  console.log(`one free core at this CPU cost: ${(1e6 / c50.serverUs).toFixed(0)} pod ` +
    `creates/s, ${(1e6 / m50.serverUs).toFixed(0)} configmap creates/s, ` +
    `${(1e6 / g50.serverUs).toFixed(0)} gets/s`);
  report('watch events lost+duplicated+disordered', w1 + w100, '');
}

/** `watchers` watch namespace `ns` while `conc` clients create `events` ConfigMaps in it;
 *  prints delivery (loss, duplicates, order) and create-to-event latency; returns the faults. */
async function watchPhase(
  srv: ServerProcess, call: Call, watchers: number, conc: number, events: number, ns: string,
): Promise<number> {
  await call(0, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
  const rev = await new Promise<string>((resolve, reject) => {
    const req = request(`${srv.hello.url}/api/v1/namespaces/${ns}/configmaps`,
      { agent: false, ca: srv.hello.ca,
        headers: { authorization: `Bearer ${srv.hello.token}` } }, (res) => {
        let b = '';
        res.on('data', (d) => { b += d; });
        res.on('end', () => resolve(JSON.parse(b).metadata.resourceVersion));
      });
    req.on('error', reject);
    req.end();
  });
  const sentAt = new Map<string, number>();
  const ws = Array.from({ length: watchers }, () => watch(srv.hello,
    `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${rev}`, events, sentAt));
  await new Promise((r) => setTimeout(r, 500));
  const t0 = performance.now();
  await run(srv, `create under ${watchers} watcher${watchers > 1 ? 's' : ''}`, events, conc,
    (i, w) => {
      sentAt.set(`e${i}`, performance.now());
      return call(w, 'POST', `/api/v1/namespaces/${ns}/configmaps`, cm(`e${i}`));
    });
  await Promise.all(ws.map((w) => w.done));
  const wsecs = (performance.now() - t0) / 1000;
  const delivered = ws.reduce((a, w) => a + w.count, 0);
  const bad = ws.flatMap((w) => w.bad);
  const lat = ws.flatMap((w) => w.lat).sort((a, b) => a - b);
  console.log(`watch: ${watchers} × ${events} events: ${delivered} delivered in ` +
    `${wsecs.toFixed(1)} s, lost ${watchers * events - delivered}, duplicated/out of order ` +
    `${bad.length}; create sent → event received p50 ${percentile(lat, 50).toFixed(2)} ms, ` +
    `p99 ${percentile(lat, 99).toFixed(2)} ms`);
  return watchers * events - delivered + bad.length;
}

/** fdatasync latency of the disk under `dir` right now: 200 appends of 16 KiB, one sync each. */
async function fsyncProbe(dir: string): Promise<string> {
  const fh = await open(join(dir, 'fsync-probe'), 'w');
  const buf = Buffer.alloc(16 * 1024, 7);
  const lat: number[] = [];
  try {
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      await fh.write(buf);
      await fh.datasync();
      lat.push(performance.now() - t);
    }
  } finally {
    await fh.close();
  }
  lat.sort((a, b) => a - b);
  return `disk: 16 KiB write + fdatasync p50 ${percentile(lat, 50).toFixed(2)} ms, ` +
    `p90 ${percentile(lat, 90).toFixed(2)}, p99 ${percentile(lat, 99).toFixed(2)}, ` +
    `max ${lat.at(-1)!.toFixed(1)}`;
}

async function main() {
  const childAt = process.argv.indexOf('--server');
  if (childAt > 0) return serverChild(process.argv[childAt + 1]!);
  const dir = await mkdtemp(join(tmpdir(), 'kdp-bench-'));
  const disk = await fsyncProbe(dir);
  const srv = await ServerProcess.start(join(dir, 'data'));
  const { call, close } = await client(srv.hello, 50);
  const rnd = seededRandom(7);
  try {
    for (const ns of ['b1', 'b50', 'c50']) {
      await call(0, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
    }
    console.log(`kdp apiserver over HTTPS in its own process (token authn, RBAC, admission, ` +
      `durable store with fsync), scale ${SCALE}, load average ${loadavg()[0]!.toFixed(1)}\n` +
      disk);
    // Warm up the server (JIT) before the measured phases.
    await run(srv, 'pod create warm-up, 50', n(2000), 50,
      (i, w) => call(w, 'POST', '/api/v1/namespaces/c50/pods', podBody(rnd, i)));
    const c1 = await run(srv, 'pod create, 1 client', n(500), 1,
      (i, w) => call(w, 'POST', '/api/v1/namespaces/b1/pods', podBody(rnd, i)));
    const prof = !!process.env.BENCH_CPU_PROF;
    if (prof) srv.child.send('prof-start');
    const c50 = await run(srv, 'pod create, 50 clients', n(10000), 50,
      (i, w) => call(w, 'POST', '/api/v1/namespaces/b50/pods', podBody(rnd, i)));
    if (prof) {
      const done = new Promise((r) => srv.child.once('message', r));
      srv.child.send('prof-stop');
      await done;
    }
    if (process.env.BENCH_ONLY !== 'creates') await otherPhases(srv, call, c50);
    console.log('--- ratios to target (pod creates at 50 clients)');
    report('pod creates/s at 50 clients', Math.round(c50.rate), '/s', { op: '>=', value: 3000 });
    report('pod create p99 at 50 clients', c50.p99, 'ms', { op: '<=', value: 20 });
    report('server CPU per pod create', Math.round(c50.serverUs), 'µs', { op: '<=', value: 300 });
    console.log(`pod create at 1 client: p50 ${c1.p50.toFixed(2)} ms (one write + fdatasync ` +
      `each); one free core at ${c50.serverUs.toFixed(0)} µs would serve ` +
      `${(1e6 / c50.serverUs).toFixed(0)} creates/s; the rest of the machine used ` +
      `${c50.otherCores.toFixed(2)} of ${cpus().length} cores meanwhile (load average now ` +
      `${loadavg()[0]!.toFixed(1)})`);
  } finally {
    close();
    await srv.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
