// Compile benchmark of the three proxy modes, each in its own process (a kube-proxy runs one
// mode): seeded N Services × 10 endpoints (every 4th a NodePort).
//  - input building: objects → ServicePortMap/EndpointsMap through the change trackers
//    (upstream's OnServiceAdd/OnEndpointSliceAdd + the checkout at the start of syncProxyRules);
//  - full sync: syncProxyRules from those maps to the text handed to iptables-restore / nft -f
//    (ipvs: the ipvsadm/ipset/iptables state) in the form the applier writes to the tool's
//    stdin (a flat string each, or for a large first sync the text's pieces, which the applier
//    writes one after another: no flat copy), plus the commit after a successful apply;
//    target ≤ 1 s at 10,000 Services. "compile alone" is `sync()`, which for iptables and
//    nftables already returns the write-ready text. "first" is a fresh proxier's first
//    sync; "repeat" a forced full resync of the same proxier (upstream's periodic or
//    after-failure full sync: the names cached per service/endpoint info are reused);
//  - partial sync with one Service changed among 10,000 (the change trackers' checkout at the
//    start of the sync included, as upstream's syncProxyRules does it), target ≤ 10 ms;
//  - peak RSS (kernel maxRSS) of a separate process per mode that does what a kube-proxy does
//    once: hold the 10,000 Services' objects, build the maps, full sync, apply-ready text, one
//    partial sync; target ≤ 500 MB per mode (the timing process's peak is printed too).
// Figures are medians (earlier runs' garbage collected before each timed step); CPU time (user
// + system, all threads, GC included) is the fair figure on a shared machine and carries the
// ratio; wall time is printed beside it, and the system part:
// on the development VM page faults are dear (flattening a fresh 30 MB string costs ~40 ms of
// user and ~150 ms of system time), so large outputs show a large system share there.
// The generator gives every 4th Service a NodePort from a 2,768-port range, so at 10,000 Services
// some would share one; the API server refuses that, so the bench renumbers them (unique).
// "first" is the median over fresh proxiers in one warm process; the cold figure (the very first
// sync of the process, JIT still warming) is printed beside it.
// Run: node bin/run-ts.js bench/proxy-compile.ts [mode ...] [--runs N] [--sizes 1000,10000]

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { EndpointSlice, KubeObject, Service } from '../src/api/types.js';
import { KDP_NODE_FLAGS } from '../src/cli/node-flags.js';
import type { Artifact, Proxier, ProxyMode, SyncInput } from '../src/proxy/backend.js';
import { compileConfigs, loadBackend } from '../src/proxy/compile.js';
import { EndpointsChangeTracker } from '../src/proxy/endpoints-change-tracker.js';
import { ServiceChangeTracker } from '../src/proxy/service-change-tracker.js';
import { generateServices } from '../test/helpers/service-generator.js';
import { report } from './lib-bench.js';

const ALL: ProxyMode[] = ['iptables', 'nftables', 'ipvs'];
const FULL_TARGET_MS = 1000;
const PARTIAL_TARGET_MS = 10;
const RSS_TARGET_MB = 500;

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1]! : dflt;
};
const RUNS = Number(opt('--runs', '5'));
const SIZES = opt('--sizes', '1000,10000').split(',').map(Number);

interface Times { wall: number; cpu: number; sys: number; gc: number; compile: number }

let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });

// A full collection before each timed step: the proxiers of earlier runs in this process are
// garbage that a kube-proxy (one proxier per family) never has; collecting it inside the next
// run's sync would charge that run for it. The step's own garbage stays in its figure.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/** Wall, CPU and GC-pause milliseconds of `fn`. */
async function timed<T>(fn: () => T): Promise<[T, Times]> {
  collect();
  await settle();
  const gc0 = gcMs;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const r = fn();
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  const c = process.cpuUsage(c0);
  await settle();
  const compile = (r as { compile?: number }).compile ?? NaN;
  return [r, { wall, cpu: (c.user + c.system) / 1e3, sys: c.system / 1e3, gc: gcMs - gc0,
    compile }];
}

/**
 * The artifacts as the applier writes them to the tool's stdin: a chunked artifact's pieces
 * (each a flat string), or the flat text.
 */
function writeReady(artifacts: readonly Artifact[]): number {
  let n = 0;
  // charCodeAt flattens a rope (once; V8 keeps the flat result).
  const flat = (s: string) => (s.charCodeAt(0) >= 0 ? s.length : 0);
  for (const a of artifacts) {
    if (a.chunks === undefined) n += flat(a.text);
    else for (const c of a.chunks) n += flat(c);
  }
  return n;
}

/** One sync as timed: compile, flat text, commit(true); also the CPU ms of the compile alone. */
function syncOnce(p: Proxier, input: SyncInput): { bytes: number; full: boolean; compile: number } {
  const c0 = process.cpuUsage();
  const res = p.sync(input);
  const c = process.cpuUsage(c0);
  const bytes = writeReady(res.artifacts);
  p.commit(true);
  return { bytes, full: res.full, compile: (c.user + c.system) / 1e3 };
}

/** GC entries are delivered asynchronously: yield once before reading `gc`. */
const settle = () => new Promise((r) => setTimeout(r, 5));

function median(xs: Times[]): Times {
  const pick = (k: keyof Times) => xs.map((x) => x[k]).sort((a, b) => a - b)[xs.length >> 1]!;
  return { wall: pick('wall'), cpu: pick('cpu'), sys: pick('sys'), gc: pick('gc'),
    compile: pick('compile') };
}

function show(label: string, t: Times, target?: number): void {
  const f = (v: number) => v.toFixed(1);
  const compile = Number.isNaN(t.compile) ? '' : `compile alone ${f(t.compile)} ms; `;
  const extra = `(${compile}system ${f(t.sys)} ms; wall ${f(t.wall)} ms, ` +
    `GC pauses ${f(t.gc)} ms)`;
  if (target === undefined) report(`  ${label} cpu ${extra}`, t.cpu, 'ms');
  else report(`  ${label} cpu ${extra}`, t.cpu, 'ms', { op: '<=', value: target });
}

class Inputs {
  readonly services: ServiceChangeTracker;
  readonly endpoints: EndpointsChangeTracker;
  constructor(proxier: Proxier) {
    const c = proxier.config;
    this.services = new ServiceChangeTracker({ family: c.family });
    this.endpoints = new EndpointsChangeTracker({ family: c.family, nodeName: c.nodeName });
  }
  feed(objects: readonly KubeObject[]): void {
    for (const o of objects) {
      if (o.kind === 'Service') this.services.update(undefined, o as Service);
      else if (o.kind === 'EndpointSlice') this.endpoints.update(o as EndpointSlice);
    }
  }
  checkout(): SyncInput {
    const s = this.services.checkout();
    const e = this.endpoints.checkout();
    const changed = new Set<string>([...s.changedKeys, ...e.changedKeys]);
    return { services: s.services, endpoints: e.endpoints, changed };
  }
}

async function setup(mode: ProxyMode): Promise<() => Proxier> {
  const backend = await loadBackend(mode);
  const [config] = compileConfigs({ objects: [], mode, nodeName: 'node-0',
    nodeIPs: ['172.18.0.2'], configText: 'clusterCIDR: 10.244.0.0/16\n' });
  return () => backend.buildProxier(config!);
}

/** `generateServices` with node ports made unique (valid input, as the API server enforces). */
function services(n: number): KubeObject[] {
  const objects = generateServices(n, { seed: 42 });
  let next = 30000;
  for (const o of objects) {
    const port = o.kind === 'Service' ? (o as Service).spec?.ports?.[0] : undefined;
    if (port?.nodePort !== undefined) port.nodePort = next++;
  }
  return objects;
}

/** The slice changed by partial syncs: one Service's endpoints, alternately 9 and 8. */
function changedSlice(objects: readonly KubeObject[], k: number): EndpointSlice {
  const slice = objects[2 * 777 + 1] as EndpointSlice;
  return { ...slice, endpoints: slice.endpoints.slice(0, 9 - (k % 2)) };
}

async function child(mode: ProxyMode): Promise<void> {
  const proxier = await setup(mode);
  console.log(`${mode} (pid ${process.pid}, median of ${RUNS}):`);
  let cold = true;
  for (const n of SIZES) {
    const objects = services(n);
    const build: Times[] = [];
    let input: SyncInput | undefined;
    let inputs: Inputs | undefined;
    for (let r = 0; r < RUNS; r++) {
      inputs = new Inputs(proxier());
      const [i, t] = await timed(() => { inputs!.feed(objects); return inputs!.checkout(); });
      input = i;
      build.push(t);
    }
    show(`${n} services: input building (trackers)`, median(build));
    const first: Times[] = [];
    const repeat: Times[] = [];
    let bytes = 0;
    let p: Proxier | undefined;
    for (let r = 0; r < RUNS; r++) {
      p = proxier();
      const [b, t] = await timed(() => syncOnce(p!, input!));
      bytes = b.bytes;
      first.push(t);
      const [, t2] = await timed(() =>
        syncOnce(p!, { services: input!.services, endpoints: input!.endpoints }));
      repeat.push(t2);
    }
    const mb = (bytes / 1e6).toFixed(1);
    show(`${n} services: full sync, first (${mb} MB out)`, median(first), FULL_TARGET_MS);
    if (cold) {
      // Only the first size's first run is the process's very first sync (JIT still cold).
      console.log(`    (cold: the process's very first sync: cpu ${first[0]!.cpu.toFixed(1)} ms)`);
      cold = false;
    }
    show(`${n} services: full sync, repeat`, median(repeat), FULL_TARGET_MS);
    if (n < 10_000) continue;
    const partial: Times[] = [];
    for (let k = 0; k < 2 * RUNS + 1; k++) {
      inputs!.endpoints.update(changedSlice(objects, k));
      const [b, t] = await timed(() => syncOnce(p!, inputs!.checkout()));
      partial.push(t);
      if (b.full) {
        console.log(`  ${mode}: sync after one change is full by design (no partial sync)`);
        break;
      }
    }
    if (partial.length > 1) {
      show(`partial sync, 1 of ${n} changed`, median(partial), PARTIAL_TARGET_MS);
    }
  }
  const peak = process.resourceUsage().maxRSS * 1024 / 1e6;
  console.log(`  timing process peak RSS ${peak.toFixed(0)} MB (${RUNS} proxiers and inputs ` +
    'built one after another; garbage included)');
}

/** One kube-proxy lifetime at the largest size; prints the process's peak RSS. */
async function memoryChild(mode: ProxyMode): Promise<void> {
  const proxier = await setup(mode);
  const n = Math.max(...SIZES);
  const objects = services(n);
  const p = proxier();
  const inputs = new Inputs(p);
  inputs.feed(objects);
  syncOnce(p, inputs.checkout());
  inputs.endpoints.update(changedSlice(objects, 0));
  syncOnce(p, inputs.checkout());
  const peak = process.resourceUsage().maxRSS * 1024 / 1e6;
  report(`  ${mode} peak RSS, own process (${n} services, full + partial sync)`,
    Math.round(peak), 'MB', { op: '<=', value: RSS_TARGET_MB });
  console.log(`@@peak ${peak}`);
}

async function parent(modes: ProxyMode[]): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const runner = fileURLToPath(new URL('../bin/run-ts.js', import.meta.url));
  const peaks: number[] = [];
  // As in kdp (its kube-proxies run in the kdp process): KDP_NODE_FLAGS, unless
  // BENCH_NODE_FLAGS gives others ("" for none).
  const nodeFlags = process.env.BENCH_NODE_FLAGS?.split(/\s+/).filter(Boolean) ??
    KDP_NODE_FLAGS;
  const run = (kind: string, mode: ProxyMode) => new Promise<string>((resolve, reject) => {
    const c = spawn(process.execPath, [...nodeFlags, runner, self, kind, mode,
      '--runs', String(RUNS), '--sizes', SIZES.join(',')],
    { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    c.stdout.setEncoding('utf8');
    c.stdout.on('data', (d: string) => { text += d; });
    c.on('error', reject);
    c.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`${mode}: ${code}`))));
  });
  for (const mode of modes) {
    for (const kind of ['--child', '--memory']) {
      const out = await run(kind, mode);
      process.stdout.write(out.split('\n').filter((l) => !l.startsWith('@@')).join('\n'));
      const m = /@@peak ([\d.]+)/.exec(out);
      if (m) peaks.push(Number(m[1]));
    }
  }
  if (peaks.length === 0) return;
  const total = peaks.reduce((a, b) => a + b, 0);
  report('peak RSS, largest single-mode process', Math.round(Math.max(...peaks)), 'MB',
    { op: '<=', value: RSS_TARGET_MB });
  report(`peak RSS, sum over the ${peaks.length} processes`, Math.round(total), 'MB');
}

if (args[0] === '--child') {
  await child(args[1] as ProxyMode);
} else if (args[0] === '--memory') {
  await memoryChild(args[1] as ProxyMode);
} else {
  const picked = args.filter((a) => (ALL as string[]).includes(a)) as ProxyMode[];
  await parent(picked.length ? picked : ALL);
}
