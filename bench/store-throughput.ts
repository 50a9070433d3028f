// Store benchmark: durable creates/s (1 and 50 writers), listing 100k keys, memory for 100k
// pod-sized values, replay time, and watch fan-out (100 watchers x 10,000 events).
// Run: node bin/run-ts.js bench/store-throughput.ts [--quick]
// Memory figures come from child processes started with --expose-gc, so they measure only the
// store. Targets: >= 3,000 durable creates/s at 50 writers; <= 300 MB RSS for 100k pods.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildEmbeddedStore, buildMemoryStore } from '../src/store/index.js';
import type { StoreBackend, StoreEvent } from '../src/store/types.js';
import { mulberry32, podJson, type PodRef } from './lib-store-pod-gen.js';

const MB = 1024 * 1024;
const quick = process.argv.includes('--quick');
const PODS = quick ? 20_000 : 100_000;

async function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'kdp-store-bench-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

type Phase = 'running' | 'pending';

function pods(total: number, seed: number, phase: Phase = 'running'): PodRef[] {
  const rnd = mulberry32(seed);
  return Array.from({ length: total }, (_, i) => podJson(rnd, i, phase));
}

/** Creates `total` pods from `pod(i)` with `writers` concurrent writers; returns creates/s. */
async function fill(
  s: StoreBackend, total: number, pod: (i: number) => PodRef, writers: number,
): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: writers }, async () => {
    while (next < total) {
      const p = pod(next++);
      await s.create(p.key, p.json);
    }
  }));
  return total / ((performance.now() - t0) / 1000);
}

/** Pre-generated pods, so that throughput figures exclude the generator. */
async function fillFrom(s: StoreBackend, list: readonly PodRef[], writers: number) {
  return fill(s, list.length, (i) => list[i]!, writers);
}

async function durableCreates(writers: number, total: number): Promise<number> {
  return withDir(async (dir) => {
    const s = await buildEmbeddedStore({ dataDir: dir });
    const rate = await fillFrom(s, pods(total, writers), writers);
    await s.close();
    return rate;
  });
}

/** Wall and CPU milliseconds of `fn` (CPU time is the robust figure on a shared machine). */
async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; cpuMs: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  const c = process.cpuUsage(cpu0);
  return { value, ms: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 };
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits });
}

async function listing(): Promise<void> {
  const s = buildMemoryStore();
  await fillFrom(s, pods(PODS, 3), 200);
  const full = await timed(() => s.list('/registry/pods/'));
  const paged = await timed(async () => {
    let pages = 1;
    for (let after: string | undefined; ; pages++) {
      const page = await s.list('/registry/pods/', { limit: 500, startAfter: after });
      if (!page.more) return pages;
      after = page.items[page.items.length - 1]!.key;
    }
  });
  const ns = await timed(() => s.list('/registry/pods/ns-7/'));
  const f = (t: { ms: number; cpuMs: number }) => `${fmt(t.ms, 1)} ms (cpu ${fmt(t.cpuMs, 1)})`;
  console.log(`list ${fmt(full.value.items.length)} keys: ${f(full)}; paged by 500 ` +
    `(${paged.value} pages): ${f(paged)}; one namespace (${fmt(ns.value.items.length)}): ${f(ns)}`);
  await s.close();
}

async function fanOut(): Promise<void> {
  const s = buildMemoryStore({ historyWindow: 20_000 });
  const EVENTS = 10_000;
  const got = Array.from({ length: 100 }, () => [] as number[]);
  const watchers = got.map((revs) => s.watch('/registry/pods/', 1, {
    onEvents: (evs: readonly StoreEvent[]) => {
      for (const e of evs) revs.push(e.kv.modRevision);
    },
  }));
  const t0 = performance.now();
  await fillFrom(s, pods(EVENTS, 5), 50);
  await new Promise((r) => setImmediate(r));
  const ms = performance.now() - t0;
  const ok = got.every((revs) => revs.length === EVENTS && revs.every((r, i) => r === i + 2));
  console.log(`watch fan-out 100 x ${fmt(EVENTS)}: ${ok ? 'all delivered once, in order' :
    'LOST/DUPLICATED/OUT OF ORDER'}; ${fmt(ms)} ms ` +
    `(${fmt((100 * EVENTS) / (ms / 1000))} deliveries/s)`);
  for (const w of watchers) w.stop();
  await s.close();
  if (!ok) process.exitCode = 1;
}

function rss(): { rss: number; heap: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss / MB, heap: m.heapUsed / MB };
}

/** Child: load PODS pods into a durable store (phase load) or reopen it (phase replay). */
async function memoryChild(phase: string, dir: string): Promise<void> {
  const base = rss();
  const rnd = mulberry32(11);
  let bytes = 0;
  const pod = (i: number) => {
    const p = podJson(rnd, i, phase as Phase);
    bytes += p.json.length;
    return p;
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const s = await buildEmbeddedStore({ dataDir: dir });
  const rate = phase === 'replay' ? 0 : await fill(s, PODS, pod, 100);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  bytes /= PODS;
  rss();
  await new Promise((r) => setTimeout(r, 500)); // array buffers are freed by a background sweeper
  const m = rss();
  const stats = s.stats();
  if (process.argv.includes('--verbose')) {
    console.error(process.memoryUsage());
    const v8 = await import('node:v8');
    for (const sp of v8.getHeapSpaceStatistics()) {
      const mb = (n: number) => (n / MB).toFixed(1);
      console.error(sp.space_name, mb(sp.space_size), mb(sp.space_used_size));
    }
  }
  await s.close();
  console.log(JSON.stringify({ phase, ms, cpuMs, rate, bytes, base, ...m, keys: stats.keys }));
}

function runChild(phase: string, dir: string) {
  const args = ['--expose-gc', 'bin/run-ts.js', 'bench/store-throughput.ts', '--child', phase, dir];
  if (quick) args.push('--quick');
  const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`child ${phase} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as {
    ms: number; cpuMs: number; rate: number; bytes: number; rss: number; heap: number;
    base: { rss: number };
    keys: number;
  };
}

async function memory(phase: Phase): Promise<void> {
  await withDir(async (dir) => {
    const load = runChild(phase, dir);
    console.log(`memory, ${fmt(load.keys)} ${phase} pods (${fmt(load.bytes)} B JSON each) ` +
      `loaded durably: RSS ${fmt(load.rss)} MB (process baseline ${fmt(load.base.rss)} MB), ` +
      `heapUsed ${fmt(load.heap)} MB; ratio to 300 MB target: ${fmt(load.rss / 300, 2)}; ` +
      `load ${fmt(load.rate)} creates/s at 100 writers`);
    if (phase !== 'running') return;
    const rep = runChild('replay', dir);
    console.log(`reopen (snapshot + WAL replay) of ${fmt(rep.keys)} pods: ${fmt(rep.ms)} ms ` +
      `(cpu ${fmt(rep.cpuMs)} ms); ` +
      `RSS after ${fmt(rep.rss)} MB, heapUsed ${fmt(rep.heap)} MB`);
  });
}

async function main(): Promise<void> {
  const childAt = process.argv.indexOf('--child');
  if (childAt > 0) return memoryChild(process.argv[childAt + 1]!, process.argv[childAt + 2]!);
  const [load1] = (await import('node:os')).loadavg();
  console.log(`load average at start: ${fmt(load1!, 1)} (2 cores; wall times scale with it)`);
  const one = await durableCreates(1, quick ? 500 : 2_000);
  console.log(`durable creates, 1 writer: ${fmt(one)}/s`);
  const fifty = await durableCreates(50, quick ? 5_000 : 20_000);
  console.log(`durable creates, 50 writers: ${fmt(fifty)}/s; ratio to 3,000/s target: ` +
    `${fmt(fifty / 3000, 2)}`);
  await listing();
  await fanOut();
  await memory('pending');
  await memory('running');
}

await main();
