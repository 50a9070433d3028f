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

function ms(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function line(label: string, value: number, unit: string, target: number): void {
  const ratio = (value / target).toFixed(2);
  console.log(`  ${label.padEnd(44)} ${value.toFixed(1).padStart(9)} ${unit}  (${ratio} of target)`);
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
    const t0 = process.hrtime.bigint();
    const r = p.sync();
    const full = ms(t0);
    sample();
    p.commit(true);
    const bytes = r.artifacts.reduce((a, x) => a + x.text.length, 0);
    line(`full sync, ${n} services (${(bytes / 1e6).toFixed(1)} MB out)`, full, 'ms',
      FULL_TARGET_MS);
    if (n !== 10_000) continue;
    const slice = objects[2 * 777 + 1] as EndpointSlice;
    const times: number[] = [];
    for (let k = 0; k < 5; k++) {
      p.onEndpointSlice({ ...slice, endpoints: slice.endpoints.slice(0, 9 - (k % 2)) });
      const t1 = process.hrtime.bigint();
      const pr = p.sync();
      times.push(ms(t1));
      p.commit(true);
      if (pr.full) {
        console.log(`  ${mode}: sync after one change was full (no partial sync)`);
        break;
      }
    }
    times.sort((a, b) => a - b);
    line('partial sync, 1 of 10000 changed (median of 5)', times[2]!, 'ms', PARTIAL_TARGET_MS);
  }
}

for (const mode of MODES) await benchMode(mode);
sample();
console.log(`peak RSS ${(peakRss / 1e6).toFixed(0)} MB (${(peakRss / 1e6 / RSS_TARGET_MB)
  .toFixed(2)} of target ${RSS_TARGET_MB} MB)`);
