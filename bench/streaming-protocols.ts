// The streaming protocols alone (src/streaming, no runtime, no namespaces), with the real
// kubectl against a stand-in API server on loopback:
//  - port-forward download throughput, kubectl 1.27 (SPDY) and 1.33 (SPDY tunnelled in a
//    WebSocket), against a direct loopback connection to the same source; target ≥ 50 %;
//  - upload throughput the same way (no target; the Go client's small writes bound it);
//  - `kubectl exec p -- true` round trip p50/p99 over `kubectl get pod p` on the same server
//    (the protocol's own overhead; the process start is not in it); target ≤ 50 ms p50.
// The source/sink and the measuring client run in child processes of their own, so this process
// is only the streaming server. BENCH_SCALE=0.25 for a quick run.
//   node bin/run-ts.js bench/streaming-protocols.ts

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { childProcessStream, loopbackDial } from '../src/streaming/fakes.js';
import { startForward } from '../test/streaming/helpers/port-forward.js';
import { kubectlPath, startStreamServer } from '../test/streaming/helpers/stream-server.js';
import { percentile, report } from './lib-bench.js';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const BYTES = Math.round(512 * 1024 * 1024 * SCALE);
const RUNS = 3;
const EXECS = Math.max(5, Math.round(30 * SCALE));

// Children: `serve` answers each connection by sending BYTES (or by reading to the end when
// `sink`); `get PORT`/`put PORT` time one transfer and print MB/s.
const CHILD = `
import { createServer, connect } from 'node:net';
const [mode, arg, bytes] = process.argv.slice(1);
const size = Number(bytes);
const chunk = Buffer.alloc(64 * 1024, 7);
const pump = (s, done) => { let sent = 0; const go = () => { while (sent < size) { sent += chunk.length;
  if (!s.write(chunk)) return void s.once('drain', go); } done(); }; go(); };
if (mode === 'serve') {
  const srv = createServer((s) => { s.on('error', () => {});
    if (arg === 'sink') { s.resume(); s.on('end', () => s.end()); } else pump(s, () => s.end()); });
  srv.listen(0, '127.0.0.1', () => console.log(srv.address().port));
} else {
  const t = process.hrtime.bigint(); let n = 0; const c = connect(Number(arg), '127.0.0.1');
  c.on('data', (d) => { n += d.length; });
  if (mode === 'put') c.on('connect', () => pump(c, () => c.end()));
  c.on('close', () => { const s = Number(process.hrtime.bigint() - t) / 1e9;
    console.log(((mode === 'put' ? size : n) / s / 1e6).toFixed(1)); });
}`;

function child(args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, ['--input-type=module', '-e', CHILD, ...args]);
    let out = '';
    c.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    c.on('close', () => resolve(out.trim()));
  });
}

async function server(mode: 'source' | 'sink'): Promise<{ port: number; stop(): void }> {
  const c = spawn(process.execPath, ['--input-type=module', '-e', CHILD, 'serve', mode, String(BYTES)]);
  const port = await new Promise<number>((r) => c.stdout.once('data', (d: Buffer) => r(Number(String(d).trim()))));
  return { port, stop: () => c.kill() };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function transfers(kind: 'get' | 'put', port: number): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < RUNS; i++) xs.push(Number(await child([kind, String(port), String(BYTES)])));
  return median(xs);
}

async function main(): Promise<void> {
  const minors = [27, 33].filter((m) => existsSync(kubectlPath(m)));
  if (minors.length === 0) {
    console.log('no kubectl 1.27/1.33 build: skipped');
    return;
  }
  // The forwarded path needs about two cores (this server and kubectl) where the direct one
  // needs one: on a busy machine the share drops, so say how busy it was.
  console.log(`machine: ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(2)}`);
  for (const kind of ['get', 'put'] as const) {
    const backend = await server(kind === 'get' ? 'source' : 'sink');
    const srv = await startStreamServer({
      start: (_k, argv, o) => childProcessStream(argv, o), dial: loopbackDial(() => backend.port),
    });
    try {
      const direct = await transfers(kind, backend.port);
      report(`port-forward ${kind === 'get' ? 'download' : 'upload'}: direct loopback`, direct, 'MB/s');
      for (const minor of minors) {
        const fwd = await startForward(srv, minor, [80]);
        const via = await transfers(kind, fwd.ports.get(80)!);
        await fwd.stop();
        const what = `port-forward ${kind === 'get' ? 'download' : 'upload'}, kubectl 1.${minor}`;
        report(`${what}`, via, 'MB/s');
        report(`${what}: share of direct`, (100 * via) / direct, '%',
          kind === 'get' ? { op: '>=', value: 50 } : undefined);
      }
    } finally {
      await srv.close();
      backend.stop();
    }
  }

  const srv = await startStreamServer({ start: (_k, argv, o) => childProcessStream(argv, o) });
  try {
    for (const minor of minors) {
      const time = async (args: string[]): Promise<number[]> => {
        const xs: number[] = [];
        for (let i = 0; i < EXECS; i++) {
          const t = performance.now();
          await srv.kubectl(minor, args);
          xs.push(performance.now() - t);
        }
        return xs.sort((a, b) => a - b);
      };
      await time(['get', 'pod', 'p', '-o', 'name']); // warm the discovery cache
      const get = await time(['get', 'pod', 'p', '-o', 'name']);
      const exec = await time(['exec', 'p', '--', 'true']);
      report(`kubectl 1.${minor} get pod p50`, percentile(get, 50), 'ms');
      report(`kubectl 1.${minor} exec -- true p50`, percentile(exec, 50), 'ms');
      report(`kubectl 1.${minor} exec -- true p99`, percentile(exec, 99), 'ms');
      report(`kubectl 1.${minor} exec overhead over get, p50`, percentile(exec, 50) - percentile(get, 50), 'ms',
        { op: '<=', value: 50 });
    }
  } finally {
    await srv.close();
  }
}

await main();
process.exit(0);
