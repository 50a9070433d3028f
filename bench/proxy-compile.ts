// Compile benchmark for every proxy mode whose backend exists: seeded N Services × 10 endpoints,
// full sync of 1,000 and 10,000 Services (target ≤ 1 s), partial sync with one Service changed
// among 10,000 (target ≤ 10 ms), peak RSS (target ≤ 500 MB).
// Run: node bin/run-ts.js bench/proxy-compile.ts [mode ...]

import type { EndpointSlice } from '../src/api/types.js';
import type { ProxyMode } from '../src/proxy/backend.js';
import { compileConfigs, feedObjects, loadBackend } from '../src/proxy/compile.js';
import type { BackendModule } from '../src/proxy/compile.js';
import { ProxyPipeline } from '../src/proxy/pipeline.js';
import { generateServices } from '../test/helpers/service-generator.js';

const ALL: ProxyMode[] = ['iptables', 'nftables', 'ipvs'];
const picked = process.argv.slice(2) as ProxyMode[];
const MODES = picked.length ? ALL.filter((m) => picked.includes(m)) : ALL;
const FULL_TARGET_MS = 1000;
const PARTIAL_TARGET_MS = 10;
const RSS_TARGET_MB = 500;
let peakRss = 0;
const sample = () => { peakRss = Math.max(peakRss, process.memoryUsage().rss); };

function pipelineFor(backend: BackendModule, mode: ProxyMode): ProxyPipeline {
  const [config] = compileConfigs({ objects: [], mode, nodeName: 'node-0',
    nodeIPs: ['172.18.0.2'], configText: 'clusterCIDR: 10.244.0.0/16\n' });
  return new ProxyPipeline(backend.buildProxier(config!));
}

/** Wall and CPU milliseconds since `start()` (CPU time is the fair figure on a shared host). */
function start(): () => { wall: number; cpu: number } {
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  return () => {
    const c = process.cpuUsage(c0);
    return { wall: Number(process.hrtime.bigint() - t0) / 1e6, cpu: (c.user + c.system) / 1e3 };
  };
}

function line(label: string, t: { wall: number; cpu: number }, target: number): void {
  const f = (v: number) => v.toFixed(1).padStart(8);
  console.log(`  ${label.padEnd(46)} wall ${f(t.wall)} ms, cpu ${f(t.cpu)} ms ` +
    `(cpu ${(t.cpu / target).toFixed(2)} of target ${target} ms)`);
}

async function benchMode(mode: ProxyMode): Promise<void> {
  let backend: BackendModule;
  try {
    backend = await loadBackend(mode);
  } catch {
    console.log(`${mode}: no backend, skipped`);
    return;
  }
  console.log(`${mode}:`);
  for (const n of [1000, 10_000]) {
    const objects = generateServices(n, { seed: 42 });
    const p = pipelineFor(backend, mode);
    feedObjects(p, objects);
    const stop = start();
    const r = p.sync();
    const full = stop();
    sample();
    p.commit(true);
    const bytes = r.artifacts.reduce((a, x) => a + x.text.length, 0);
    line(`full sync, ${n} services (${(bytes / 1e6).toFixed(1)} MB out)`, full, FULL_TARGET_MS);
    if (n !== 10_000) continue;
    const slice = objects[2 * 777 + 1] as EndpointSlice;
    const times: Array<{ wall: number; cpu: number }> = [];
    for (let k = 0; k < 5; k++) {
      p.onEndpointSlice({ ...slice, endpoints: slice.endpoints.slice(0, 9 - (k % 2)) });
      const stop1 = start();
      const pr = p.sync();
      times.push(stop1());
      p.commit(true);
      if (pr.full) {
        console.log(`  ${mode}: sync after one change was full (no partial sync)`);
        break;
      }
    }
    if (times.length < 5) continue;
    times.sort((a, b) => a.cpu - b.cpu);
    line('partial sync, 1 of 10000 changed (median of 5)', times[2]!, PARTIAL_TARGET_MS);
  }
}

for (const mode of MODES) await benchMode(mode);
sample();
console.log(`peak RSS ${(peakRss / 1e6).toFixed(0)} MB (${(peakRss / 1e6 / RSS_TARGET_MB)
  .toFixed(2)} of target ${RSS_TARGET_MB} MB)`);
