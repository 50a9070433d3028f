// `kdp diff` benchmark: seeded Services × 10 endpoints compiled with compileOffline; the second
// table has one Service scaled down and one endpoint added elsewhere.
//   semantic diff of two 10,000-Service iptables dumps   target ≤ 2 s
//   semantic diff of two 2,000-Service nftables dumps    (reported; no reduced path yet)
//   --behaviour on 1,000 Services (iptables vs iptables, and iptables vs nftables)  ≤ 5 s
// Run: node bin/run-ts.js bench/diff.ts

import type { EndpointSlice, KubeObject } from '../src/api/types.js';
import { runDiff, type DiffView } from '../src/diff/diff.js';
import type { DiffFormat } from '../src/diff/types.js';
import type { ProxyMode } from '../src/proxy/backend.js';
import { compileOffline } from '../src/proxy/compile.js';
import { generateServices } from '../test/helpers/service-generator.js';
import { report } from './lib-bench.js';

const NODE_IPS = ['172.18.0.2'];

function edited(objects: readonly KubeObject[]): KubeObject[] {
  const out = structuredClone([...objects]);
  const slices = out.filter((o) => o.kind === 'EndpointSlice') as EndpointSlice[];
  slices[7]!.endpoints = slices[7]!.endpoints.slice(0, 5);
  slices[slices.length - 3]!.endpoints.push({ addresses: ['10.244.250.250'], nodeName: 'node-1',
    conditions: { ready: true } });
  return out;
}

async function compile(objects: readonly KubeObject[], mode: ProxyMode): Promise<string> {
  return compileOffline({ objects, mode, nodeName: 'node-0', nodeIPs: NODE_IPS,
    configText: 'clusterCIDR: 10.244.0.0/16\n' });
}

/** Wall and CPU time of one diff (CPU is the fairer figure on a shared host). */
function timed(a: string, fa: DiffFormat, b: string, fb: DiffFormat, view: DiffView) {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const out = runDiff({ label: 'a', text: a, format: fa }, { label: 'b', text: b, format: fb },
    { view, json: false, colour: false, nodeIPs: NODE_IPS, podCIDRs: ['10.244.0.0/24'] });
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpu: (c.user + c.system) / 1000, out };
}

function show(name: string, r: { ms: number; cpu: number }, target?: number): void {
  report(`${name} wall`, r.ms, 'ms', target ? { op: '<=', value: target } : undefined);
  report(`${name} cpu`, r.cpu, 'ms', target ? { op: '<=', value: target } : undefined);
}

async function main(): Promise<void> {
  // nftables has no reduced path yet (whole rulesets are parsed): measured at 2,000 Services.
  for (const [mode, n] of [['iptables', 10_000], ['nftables', 2000]] as const) {
    const objects = generateServices(n, { seed: 42 });
    const a = await compile(objects, mode);
    const b = await compile(edited(objects), mode);
    // Three runs: the first is cold (JIT warm-up, the compiles' garbage still to collect);
    // the target is checked against the median.
    const runs = [0, 1, 2].map(() => timed(a, mode, b, mode, 'semantic'));
    const r = [...runs].sort((x, y) => x.ms - y.ms)[1]!;
    const changes = r.out.text.trimEnd().split('\n').length;
    report(`semantic diff, ${n} services, ${mode}: first (cold) run wall`, runs[0]!.ms, 'ms');
    show(`semantic diff, ${n} services, ${mode} (${(a.length / 1e6).toFixed(1)} MB each, ` +
      `${changes} lines out), median of 3`, r, mode === 'iptables' ? 2000 : undefined);
  }
  const small = generateServices(1000, { seed: 7 });
  const ia = await compile(small, 'iptables');
  const ib = await compile(edited(small), 'iptables');
  const na = await compile(small, 'nftables');
  const r1 = timed(ia, 'iptables', ib, 'iptables', 'behaviour');
  show(`--behaviour, 1000 services, iptables vs iptables (${r1.out.text.trimEnd().split('\n').pop()})`,
    r1, 5000);
  const r2 = timed(ia, 'iptables', na, 'nftables', 'behaviour');
  show(`--behaviour, 1000 services, iptables vs nftables (${r2.out.text.trimEnd().split('\n').pop()})`,
    r2, 5000);
}

await main();
