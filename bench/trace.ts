// Tracer benchmarks: simulated traces per second over a 1,000-Service table in each mode
// (target ≥ 50,000/s), and `kdp verify` over 1,000 pods and 200 Services on 10 nodes
// (target ≤ 5 s). Seeded; tables compiled by kdp's own compilers.

import type { EndpointSlice, KubeObject, Service } from '../src/api/types.js';
import type { ProxyMode } from '../src/proxy/backend.js';
import { compileOffline } from '../src/proxy/compile.js';
import { buildFilter } from '../src/trace/offline.js';
import { foldArrivals } from '../src/trace/result.js';
import type { Topology } from '../src/trace/topology.js';
import { verifyCluster } from '../src/trace/verify.js';
import type { Packet } from '../src/trace/packet.js';
import { walk } from '../src/trace/walk.js';
import { generateServices } from '../test/helpers/service-generator.js';
import { report, seededRandom } from './lib-bench.js';

/** A seeded mix of ClusterIP packets entering node-0 from outside (the bulk-tracing case: no
 *  hop records). Built before timing: the timed loop is walk + fold only. */
function packets(services: readonly Service[], n: number, seed: number): Packet[] {
  const rnd = seededRandom(seed);
  return Array.from({ length: n }, () => {
    const s = services[Math.floor(rnd() * services.length)]!;
    return { src: '10.244.0.5', dst: s.spec!.clusterIP!, proto: 'tcp' as const, sport: 40000, dport: s.spec!.ports![0]!.port };
  });
}

async function tracesPerSecond(mode: ProxyMode): Promise<void> {
  const objects = generateServices(1000, { seed: 7 });
  const text = await compileOffline({ objects, mode, nodeName: 'node-0', nodeIPs: ['172.18.0.2'], canonical: mode === 'ipvs' });
  const filter = buildFilter(mode, text);
  const topo: Topology = {
    nodes: [{ name: 'node-0', nodeIPs: ['172.18.0.2'], podCIDRs: ['10.244.0.0/24'], bridge: 'cni0',
      gatewayIPs: ['10.244.0.1'], underlayIface: 'eth0', filter }],
    pods: [],
  };
  const services = objects.filter((o): o is Service => o.kind === 'Service');
  const entry = { kind: 'external', node: 'node-0' } as const;
  const trace = (pkts: readonly Packet[]) => {
    let dnat = 0;
    for (const pkt of pkts) {
      const r = foldArrivals(pkt, walk(topo, entry, pkt, false));
      if (r.verdict === 'ACCEPT' && !r.destinations[0]!.destination.startsWith(`${pkt.dst}:`)) dnat++;
    }
    return dnat;
  };
  trace(packets(services, 5_000, 5)); // warm-up (JIT), not timed
  const pkts = packets(services, 50_000, 11);
  const t0 = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const dnatted = trace(pkts);
  const cpu = process.cpuUsage(cpu0);
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpuS = (cpu.user + cpu.system) / 1e6;
  // Every packet is for a Service with endpoints: each must be DNATed, or the table is wrong.
  if (dnatted !== pkts.length) throw new Error(`${mode}: ${dnatted} of ${pkts.length} traces DNATed`);
  const label = `${mode}: simulated traces, 1,000 Services × 10 endpoints`;
  report(`${label} (CPU time)`, pkts.length / cpuS, 'traces/s', { op: '>=', value: 50_000 });
  report(`${label} (wall time)`, pkts.length / wall, 'traces/s');
}

async function verifyBench(): Promise<void> {
  const nodes = 10;
  const objects = generateServices(200, { seed: 3, endpointsPerService: 5 }) as KubeObject[];
  const slices = objects.filter((o): o is EndpointSlice => o.kind === 'EndpointSlice');
  const services = objects.filter((o): o is Service => o.kind === 'Service');
  const topo: { nodes: Topology['nodes'][number][]; pods: Topology['pods'][number][] } = { nodes: [], pods: [] };
  for (let i = 0; i < nodes; i++) {
    const ip = `172.18.0.${i + 2}`;
    const text = await compileOffline({ objects, mode: 'iptables', nodeName: `node-${i}`, nodeIPs: [ip] });
    topo.nodes.push({ name: `node-${i}`, nodeIPs: [ip], podCIDRs: [`10.244.${i}.0/24`], bridge: 'cni0',
      gatewayIPs: [`10.244.${i}.1`], underlayIface: 'eth0', filter: buildFilter('iptables', text) });
  }
  for (let p = 0; p < 1000; p++) {
    const node = p % nodes;
    topo.pods.push({ name: `default/p${p}`, ip: `10.244.${node}.${10 + Math.floor(p / nodes)}`, node: `node-${node}` });
  }
  const t0 = process.hrtime.bigint();
  const checks = verifyCluster({ topo, services, slices });
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const cases = checks.reduce((a, c) => a + c.cases, 0);
  report(`verify: 1,000 pods, 200 Services, 10 nodes (${cases} cases)`, s, 's', { op: '<=', value: 5 });
}

// Optional filter: `node bin/run-ts.js bench/trace.ts [iptables|nftables|ipvs|verify]...`.
const only = process.argv.slice(2);
for (const mode of ['iptables', 'nftables', 'ipvs'] as const) {
  if (only.length === 0 || only.includes(mode)) await tracesPerSecond(mode);
}
if (only.length === 0 || only.includes('verify')) await verifyBench();
