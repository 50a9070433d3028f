// API server throughput and latency over HTTPS, as deployed: `kdp apiserver` (startApiServer:
// TLS, token authn, RBAC, admission, durable embedded store with group commit + fsync) runs in
// a child process of its own, so the figures below split the server's CPU from the load
// generator's (keep-alive HTTPS agents in this process). Creates of pods (as a ReplicaSet
// controller sends them) and of ConfigMaps at 1 and 50 clients, gets at 50 clients, then 100
// watchers × N events checked for loss, duplication and order.
// Targets: ≥ 3,000 creates/s and p99 ≤ 20 ms at 50 clients; the figure the server controls is
// its CPU per create (≤ ~300 µs leaves one core enough for 3,000/s).
//   node bin/run-ts.js bench/apiserver-http.ts        (BENCH_SCALE=0.2 for a quick run;
//   BENCH_CPU_PROF=/tmp/dir writes a .cpuprofile of the server during the measured 50-client
//   pod creates there; BENCH_ONLY=creates stops after them)

import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import type { TLSSocket } from 'node:tls';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentile, report, seededRandom } from './lib-bench.js';

const SCALE = Number(process.env.BENCH_SCALE ?? '1');
const n = (x: number) => Math.max(1, Math.round(x * SCALE));

interface Hello { url: string; ca: string; token: string }
type CpuReply = { cpu: NodeJS.CpuUsage };

/** Child side: start the API server, report where it listens, answer CPU questions. */
async function serverChild(dir: string): Promise<void> {
  const { startApiServer } = await import('../src/apiserver/start.js');
  const srv = await startApiServer({ dataDir: dir, port: 0 });
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  process.on('message', (m: string) => {
    if (m === 'cpu') process.send!({ cpu: process.cpuUsage() });
    if (m === 'stop') void srv.close().then(() => process.exit(0));
    if (m === 'prof-start') {
      session.connect();
      void session.post('Profiler.enable').then(() => session.post('Profiler.start'));
    }
    if (m === 'prof-stop') {
      void session.post('Profiler.stop').then(async ({ profile }) => {
        const { writeFile } = await import('node:fs/promises');
        const file = join(process.env.BENCH_CPU_PROF!, `server-${Date.now()}.cpuprofile`);
        await writeFile(file, JSON.stringify(profile));
        console.log(`server profile: ${file}`);
        session.disconnect();
        process.send!({ profiled: file });
      });
    }
  });
  const hello: Hello = { url: srv.url, ca: srv.pki.caCertPem, token: srv.pki.adminToken };
  process.send!(hello);
}

class ServerProcess {
  private waiters: ((r: CpuReply) => void)[] = [];
  constructor(readonly child: ChildProcess, readonly hello: Hello) {
    child.on('message', (m: CpuReply) => { if ('cpu' in m) this.waiters.shift()?.(m); });
  }

  static async start(dir: string): Promise<ServerProcess> {
    const child = fork('bin/run-ts.js', ['bench/apiserver-http.ts', '--server', dir], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const hello = await new Promise<Hello>((resolve, reject) => {
      child.once('message', (m: Hello) => resolve(m));
      child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    });
    return new ServerProcess(child, hello);
  }

  /** Server CPU time used so far, in µs. */
  async cpuUs(): Promise<number> {
    const r = await new Promise<CpuReply>((resolve) => {
      this.waiters.push(resolve);
      this.child.send('cpu');
    });
    return r.cpu.user + r.cpu.system;
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
  private buf: Buffer = Buffer.alloc(0);
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
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = this.buf.subarray(0, end).toString('latin1');
    const m = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!m) throw new Error(`response without content-length: ${head}`);
    const total = end + 4 + Number(m[1]);
    if (this.buf.length < total) return;
    this.buf = this.buf.subarray(total);
    const w = this.waiting!;
    this.waiting = undefined;
    w.resolve(Number(head.slice(9, 12)));
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

interface Phase { rate: number; p50: number; p99: number; serverUs: number; clientUs: number }

async function run(
  srv: ServerProcess, label: string, total: number, conc: number,
  op: (i: number, worker: number) => Promise<unknown>,
): Promise<Phase> {
  const lat: number[] = [];
  let next = 0;
  const s0 = await srv.cpuUs();
  const c0 = process.cpuUsage();
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
  const serverUs = (await srv.cpuUs() - s0) / total;
  const clientUs = (c.user + c.system) / total;
  lat.sort((a, b) => a - b);
  const out = { rate: total / secs, p50: percentile(lat, 50), p99: percentile(lat, 99), serverUs,
    clientUs };
  console.log(`${label.padEnd(26)} ${String(total).padStart(6)} ops ` +
    `${out.rate.toFixed(0).padStart(6)}/s  p50 ${out.p50.toFixed(2)} ms  ` +
    `p99 ${out.p99.toFixed(2)} ms  server cpu ${serverUs.toFixed(0)} µs/op, ` +
    `load generator ${clientUs.toFixed(0)} µs/op`);
  return out;
}

interface WatchCheck { count: number; lastRv: number; names: Set<string>; bad: string[];
  done: Promise<void> }

function watch(hello: Hello, path: string, expect: number): WatchCheck {
  const st: WatchCheck = { count: 0, lastRv: 0, names: new Set(), bad: [],
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

async function main() {
  const childAt = process.argv.indexOf('--server');
  if (childAt > 0) return serverChild(process.argv[childAt + 1]!);
  const dir = await mkdtemp(join(tmpdir(), 'kdp-bench-'));
  const srv = await ServerProcess.start(join(dir, 'data'));
  const { call, close } = await client(srv.hello, 50);
  const rnd = seededRandom(7);
  try {
    for (const ns of ['b1', 'b50', 'c50', 'w']) {
      await call(0, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
    }
    console.log(`kdp apiserver over HTTPS in its own process (token authn, RBAC, admission, ` +
      `durable store with fsync), scale ${SCALE}, load average ${loadavg()[0]!.toFixed(1)}`);
    await run(srv, 'pod create, 1 client', n(500), 1,
      (i, w) => call(w, 'POST', '/api/v1/namespaces/b1/pods', podBody(rnd, i)));
    // Warm up the server (JIT) before the measured 50-client phase.
    await run(srv, 'pod create warm-up, 50', n(2000), 50,
      (i, w) => call(w, 'POST', '/api/v1/namespaces/c50/pods', podBody(rnd, i)));
    const prof = !!process.env.BENCH_CPU_PROF;
    if (prof) srv.child.send('prof-start');
    const c50 = await run(srv, 'pod create, 50 clients', n(10000), 50,
      (i, w) => call(w, 'POST', '/api/v1/namespaces/b50/pods', podBody(rnd, i)));
    if (prof) {
      const done = new Promise((r) => srv.child.once('message', r));
      srv.child.send('prof-stop');
      await done;
    }
    if (process.env.BENCH_ONLY === 'creates') return;
    const m50 = await run(srv, 'configmap create, 50', n(10000), 50,
      (i, w) => call(w, 'POST', '/api/v1/namespaces/c50/configmaps', cm(`c${i}`)));
    const names: string[] = [];
    for (let i = 0; i < 200; i++) names.push(`c${i}`);
    const g50 = await run(srv, 'configmap get, 50', n(20000), 50,
      (i, w) => call(w, 'GET', `/api/v1/namespaces/c50/configmaps/${names[i % names.length]}`));
    await run(srv, 'list 500 pods, 5 clients', n(50), 5,
      (_, w) => call(w, 'GET', '/api/v1/namespaces/b50/pods?limit=500'));
    const events = n(10000);
    const rev = await new Promise<string>((resolve, reject) => {
      const req = request(`${srv.hello.url}/api/v1/namespaces/w/configmaps`,
        { agent: false, ca: srv.hello.ca,
          headers: { authorization: `Bearer ${srv.hello.token}` } }, (res) => {
          let b = '';
          res.on('data', (d) => { b += d; });
          res.on('end', () => resolve(JSON.parse(b).metadata.resourceVersion));
        });
      req.on('error', reject);
      req.end();
    });
    const watchers = Array.from({ length: 100 }, () =>
      watch(srv.hello, `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${rev}`,
        events));
    await new Promise((r) => setTimeout(r, 500));
    const t0 = performance.now();
    await run(srv, 'create under 100 watchers', events, 50,
      (i, w) => call(w, 'POST', '/api/v1/namespaces/w/configmaps', cm(`e${i}`)));
    await Promise.all(watchers.map((w) => w.done));
    const wsecs = (performance.now() - t0) / 1000;
    const delivered = watchers.reduce((a, w) => a + w.count, 0);
    const bad = watchers.flatMap((w) => w.bad);
    console.log(`watch: 100 watchers × ${events} events: ${delivered} delivered in ` +
      `${wsecs.toFixed(1)} s, lost ${100 * events - delivered}, duplicated/out of order ` +
      `${bad.length}`);
    console.log('--- ratios to target');
    report('pod creates/s at 50 clients', Math.round(c50.rate), '/s', { op: '>=', value: 3000 });
    report('pod create p99 at 50 clients', c50.p99, 'ms', { op: '<=', value: 20 });
    report('server CPU per pod create', Math.round(c50.serverUs), 'µs', { op: '<=', value: 300 });
    report('server CPU per configmap create', Math.round(m50.serverUs), 'µs',
      { op: '<=', value: 300 });
    report('server CPU per get', Math.round(g50.serverUs), 'µs');
    console.log(`one free core at this CPU cost: ${(1e6 / c50.serverUs).toFixed(0)} pod ` +
      `creates/s, ${(1e6 / m50.serverUs).toFixed(0)} configmap creates/s, ` +
      `${(1e6 / g50.serverUs).toFixed(0)} gets/s (load average now ${loadavg()[0]!.toFixed(1)})`);
    report('watch events lost+duplicated+disordered', 100 * events - delivered + bad.length, '');
  } finally {
    close();
    await srv.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
