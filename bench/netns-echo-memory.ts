// Memory and start time of the echo workload: the native build kdp runs (native/kdp-echo.c) and
// the JS fallback (bin/kdp-echo.js) under V8/Node flag variants:
// RSS, PSS and private dirty memory per process with COUNT running at once (as on a node with
// many pods), and the time from spawn to its `ready` line. No root needed (ports on 127.0.0.1).
// node bin/run-ts.js bench/netns-echo-memory.ts

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveEchoCommand } from '../src/kubelet/echo-command.js';
import { mib, percentile, report } from './lib-bench.js';

const ECHO = fileURLToPath(new URL('../bin/kdp-echo.js', import.meta.url));
const COUNT = 5;
const native = await resolveEchoCommand(join(mkdtempSync(join(tmpdir(), 'kdp-echo-bench-')), 'bin'));
if (!native.native) console.log(`native echo unavailable: ${native.reason}`);
/** Node flags, or the native program (`file`). */
const VARIANTS: Record<string, string[] | { file: string }> = {
  ...(native.native ? { 'native (kdp default)': { file: native.file } } : {}),
  'none (node defaults)': [],
  'small heaps': ['--max-semi-space-size=1', '--max-old-space-size=16'],
  'small heaps, no V8 threads (kdp)': ['--max-semi-space-size=1', '--max-old-space-size=16', '--v8-pool-size=0'],
  'jitless': ['--jitless'],
  'lite-mode': ['--lite-mode'],
  'single-threaded + jitless + small heaps': ['--single-threaded', '--jitless', '--max-semi-space-size=1',
    '--max-old-space-size=16'],
};

function field(pid: number, file: string, name: string): number {
  const m = new RegExp(`${name}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/${file}`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

async function start(v: string[] | { file: string }, port: number): Promise<{ child: ChildProcess; ms: number }> {
  const t0 = performance.now();
  const [file, args] = Array.isArray(v) ? [process.execPath, [...v, ECHO]] : [v.file, []];
  const child = spawn(file, args, {
    env: { PATH: process.env.PATH, KDP_POD_NAME: `bench-${port}`, KDP_ECHO_PORTS: `${port}/TCP` },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('ready')) resolve(); });
    child.once('exit', () => reject(new Error('echo exited')));
  });
  return { child, ms: performance.now() - t0 };
}

let port = 20_000 + Math.floor(Math.random() * 10_000);
for (const [name, flags] of Object.entries(VARIANTS)) {
  const procs: Array<{ child: ChildProcess; ms: number }> = [];
  for (let i = 0; i < COUNT; i++) procs.push(await start(flags, port++));
  await new Promise((r) => setTimeout(r, 300)); // settle after start-up garbage
  const rss = procs.map((p) => field(p.child.pid!, 'status', 'VmRSS'));
  const pss = procs.map((p) => field(p.child.pid!, 'smaps_rollup', 'Pss'));
  const priv = procs.map((p) => field(p.child.pid!, 'smaps_rollup', 'Private_Dirty'));
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const starts = procs.map((p) => p.ms).sort((a, b) => a - b);
  console.log(`${name}: ${Array.isArray(flags) ? `flags ${flags.join(' ') || '-'}` : flags.file}`);
  report(`  RSS per echo (${name})`, mib(avg(rss)), 'MiB', { op: '<=', value: 30 });
  report(`  PSS per echo, ${COUNT} running`, mib(avg(pss)), 'MiB');
  report(`  private dirty per echo`, mib(avg(priv)), 'MiB');
  report(`  spawn → ready p50 (${COUNT} in turn)`, percentile(starts, 50), 'ms');
  for (const p of procs) p.child.kill('SIGTERM');
  await Promise.all(procs.map((p) => new Promise((r) => p.child.exitCode !== null ? r(null) : p.child.once('exit', r))));
}
