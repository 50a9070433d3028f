import type { ProxierConfig } from '../../src/proxy/backend.js';
import { buildProxier } from '../../src/proxy/nftables/proxier.js';
import type { EndpointInfo, ServicePortInfo } from '../../src/proxy/types.js';
import { servicePortKey } from '../../src/proxy/types.js';

const config: ProxierConfig = {
  mode: 'nftables', family: 'IPv4', nodeName: 'node-a', nodeIPs: ['172.18.0.2'],
  detectLocal: { mode: 'ClusterCIDR', cidrs: ['10.244.0.0/16'] }, masqueradeBit: 14,
  masqueradeAll: false, localhostNodePorts: false, nodePortAddresses: ['172.18.0.2/32'],
  serviceCIDRs: ['10.96.0.0/12'], minSyncPeriodMs: 1000, syncPeriodMs: 30000,
  ipvsScheduler: 'rr', ipvsStrictARP: false, capabilities: { randomFully: false, nfacct: false },
};
const N = Number(process.argv[2] ?? 10000);
const E = Number(process.argv[3] ?? 10);
const services = new Map<string, ServicePortInfo>();
const endpoints = new Map<string, EndpointInfo[]>();
function mk(i: number, eps: number): void {
  const name = { namespace: `ns${i % 50}`, name: `svc-${i}`, port: 'http', protocol: 'TCP' as const };
  const key = servicePortKey(name);
  services.set(key, {
    name, clusterIP: `10.96.${(i >> 8) & 255}.${i & 255}`, port: 80, protocol: 'TCP',
    nodePort: i % 10 === 0 ? 30000 + (i % 2000) : 0, loadBalancerVIPs: [], sessionAffinityClientIP: false,
    stickyMaxAgeSeconds: 10800, externalIPs: [], loadBalancerSourceRanges: [], healthCheckNodePort: 0,
    externalPolicyLocal: false, internalPolicyLocal: false, hintsAnnotation: '',
  });
  const list: EndpointInfo[] = [];
  for (let j = 0; j < eps; j++) {
    const ip = `10.244.${(i * eps + j) >> 8 & 255}.${(i * eps + j) & 255}`;
    list.push({ ip, port: 8080, endpoint: `${ip}:8080`, isLocal: j === 0, ready: true,
      serving: true, terminating: false, nodeName: 'node-b' });
  }
  list.sort((a, b) => (a.endpoint < b.endpoint ? -1 : 1));
  endpoints.set(key, list);
}
for (let i = 0; i < N; i++) mk(i, E);
const p = buildProxier(config);
let t = performance.now();
const cpu0 = process.cpuUsage();
const r = p.sync({ services, endpoints });
const full = performance.now() - t;
const cpu = process.cpuUsage(cpu0);
console.log(`cpu user ${(cpu.user / 1000).toFixed(0)} ms system ${(cpu.system / 1000).toFixed(0)} ms`);
p.commit(true);
const bytes = r.artifacts.reduce((n, a) => n + a.text.length, 0);
console.log(`full sync ${N} svc x ${E} eps: ${full.toFixed(0)} ms, ${(bytes / 1e6).toFixed(1)} MB, target 1000 ms, ratio ${(full / 1000).toFixed(2)}`);
const times: number[] = [];
for (let k = 0; k < 20; k++) {
  const i = (k * 37) % N;
  mk(i, E + 1 + (k % 3));
  const key = [...services.keys()][i]!;
  t = performance.now();
  const pr = p.sync({ services, endpoints, changed: new Set([key]) });
  times.push(performance.now() - t);
  p.commit(true);
  if (pr.full) throw new Error('expected partial');
}
times.sort((a, b) => a - b);
console.log(`partial sync 1 svc: median ${times[10]!.toFixed(2)} ms, max ${times[19]!.toFixed(2)} ms, target 10 ms, ratio ${(times[10]! / 10).toFixed(2)}`);
for (let k = 0; k < 2; k++) {
  const p2 = buildProxier(config);
  const t2 = performance.now();
  p2.sync({ services, endpoints });
  console.log(`warm full sync #${k + 1}: ${(performance.now() - t2).toFixed(0)} ms`);
}
