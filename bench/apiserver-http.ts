// API server throughput and latency over HTTP with the durable embedded store (fsync on):
// creates, gets and lists at 1 and 50 concurrent keep-alive clients, then 100 watchers × 10,000
// events checked for loss, duplication and order. Targets: ≥ 3,000 creates/s and p99 ≤ 20 ms
// at 50 clients. Sizes can be shrunk with BENCH_SCALE=0.1 for a quick run.
//   node bin/run-ts.js bench/apiserver-http.ts

import { Agent, request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenApiServer } from '../src/apiserver/serve.js';
import { buildEmbeddedStore } from '../src/store/index.js';

const SCALE = Number(process.env.BENCH_SCALE ?? '1');
const n = (x: number) => Math.max(1, Math.round(x * SCALE));
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function call(base: string, method: string, path: string, body?: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(base + path, { method, agent, headers: payload ?
      { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {} },
    (res) => {
      res.resume();
      res.on('end', () => (res.statusCode! < 300 ? resolve(res.statusCode!) :
        reject(new Error(`${method} ${path}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function run(
  label: string, total: number, conc: number, op: (i: number) => Promise<unknown>,
) {
  const lat: number[] = [];
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: conc }, async () => {
    for (let i = next++; i < total; i = next++) {
      const s = performance.now();
      await op(i);
      lat.push(performance.now() - s);
    }
  }));
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuUs = (cpu.user + cpu.system) / total;
  lat.sort((a, b) => a - b);
  const rate = total / secs;
  console.log(`${label.padEnd(28)} ${String(total).padStart(6)} ops ` +
    `${rate.toFixed(0).padStart(6)}/s  p50 ${pct(lat, 0.5).toFixed(2)} ms  ` +
    `p99 ${pct(lat, 0.99).toFixed(2)} ms  cpu ${cpuUs.toFixed(0)} µs/op (client+server)`);
  return { rate, p99: pct(lat, 0.99), cpuUs };
}

interface WatchCheck {
  count: number; lastRv: number; names: Set<string>; bad: string[]; done: Promise<void>;
}

function watch(base: string, path: string, expect: number): WatchCheck {
  const st: WatchCheck = { count: 0, lastRv: 0, names: new Set(), bad: [],
    done: Promise.resolve() };
  st.done = new Promise((resolve, reject) => {
    const req = request(base + path, { agent: false }, (res) => {
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        buf += d;
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          const ev = JSON.parse(line) as { type: string; object: { metadata: { name: string;
            resourceVersion: string } } };
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

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'kdp-bench-'));
  const store = await buildEmbeddedStore({ dataDir: dir });
  const srv = await listenApiServer({ store }, { port: 0, insecureHttp: true });
  const base = srv.url;
  const cm = (ns: string, name: string) => ({ metadata: { name, labels: { app: 'bench' } },
    data: { k: 'v'.repeat(64) } });
  try {
    for (const ns of ['b1', 'b50', 'w']) {
      await call(base, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
    }
    console.log(`kdp apiserver over HTTP, durable store (fsync), scale ${SCALE}`);
    const c1 = await run('create, 1 client', n(1000), 1,
      (i) => call(base, 'POST', '/api/v1/namespaces/b1/configmaps', cm('b1', `c${i}`)));
    const c50 = await run('create, 50 clients', n(10000), 50,
      (i) => call(base, 'POST', '/api/v1/namespaces/b50/configmaps', cm('b50', `c${i}`)));
    const g1 = await run('get, 1 client', n(2000), 1,
      (i) => call(base, 'GET', `/api/v1/namespaces/b1/configmaps/c${i % n(1000)}`));
    const g50 = await run('get, 50 clients', n(20000), 50,
      (i) => call(base, 'GET', `/api/v1/namespaces/b50/configmaps/c${i % n(10000)}`));
    await run('list 1000 objects, 1 client', n(50), 1,
      () => call(base, 'GET', '/api/v1/namespaces/b1/configmaps'));
    await run('list 500 (limit), 50 clients', n(500), 50,
      () => call(base, 'GET', '/api/v1/namespaces/b50/configmaps?limit=500'));
    const events = n(10000);
    const watchers = Array.from({ length: 100 }, () =>
      watch(base, '/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=' +
        store.currentRevision(), events));
    await new Promise((r) => setTimeout(r, 500));
    const t0 = performance.now();
    await run('create under 100 watchers', events, 50,
      (i) => call(base, 'POST', '/api/v1/namespaces/w/configmaps', cm('w', `e${i}`)));
    await Promise.all(watchers.map((w) => w.done));
    const wsecs = (performance.now() - t0) / 1000;
    const delivered = watchers.reduce((a, w) => a + w.count, 0);
    const bad = watchers.flatMap((w) => w.bad);
    console.log(`watch: 100 watchers × ${events} events: ${delivered} delivered in ` +
      `${wsecs.toFixed(1)} s` +
      ` (${(delivered / wsecs).toFixed(0)} events/s), lost ${100 * events - delivered},` +
      ` duplicated/out-of-order ${bad.length}`);
    console.log('--- ratios to target (≥1 is met)');
    console.log(`creates/s at 50 clients: ${c50.rate.toFixed(0)} / 3000 = ` +
      `${(c50.rate / 3000).toFixed(2)}`);
    console.log(`create p99 at 50 clients: 20 / ${c50.p99.toFixed(2)} ms = ` +
      `${(20 / c50.p99).toFixed(2)}`);
    console.log(`(1 client: ${c1.rate.toFixed(0)} creates/s; gets ${g1.rate.toFixed(0)}/s and ` +
      `${g50.rate.toFixed(0)}/s at 50)`);
    console.log(`CPU-bound ceiling on one free core (client+server in this process): ` +
      `${(1e6 / c50.cpuUs).toFixed(0)} creates/s, ${(1e6 / g50.cpuUs).toFixed(0)} gets/s ` +
      `(load average now ${(await import('node:os')).loadavg()[0]!.toFixed(1)} on ` +
      `${(await import('node:os')).cpus().length} cores)`);
    const wrong = 100 * events - delivered + bad.length;
    console.log(`watch events lost+dup+disordered: ${wrong} (target 0)`);
  } finally {
    agent.destroy();
    await srv.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
