import type { ProxierConfig } from '../src/proxy/backend.js';
import { servicePortKey, type EndpointInfo, type ServicePortInfo } from '../src/proxy/types.js';
import { ActiveIpSets } from '../src/proxy/ipvs/ipset.js';
import { IpvsModel } from '../src/proxy/ipvs/ipvs-model.js';
import { GracefulTermination } from '../src/proxy/ipvs/graceful-termination.js';
import { syncServicePort } from '../src/proxy/ipvs/service-port.js';
import { writeIptablesRules } from '../src/proxy/ipvs/iptables-rules.js';
import { formatIpsetSave } from '../src/ruleset/ipvs/ipset.js';
import { topologyContextOf } from '../src/proxy/topology.js';
const SERVICES = 10000; const EPS = 10;
/** mulberry32: small seeded PRNG so every run builds the same cluster. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ip = (base: number, n: number) =>
  `${base >> 8}.${base & 255}.${(n >> 8) & 255}.${n & 255}`;

function cluster(seed: number) {
  const rand = rng(seed);
  const services = new Map<string, ServicePortInfo>();
  const endpoints = new Map<string, EndpointInfo[]>();
  let podN = 0;
  for (let i = 0; i < SERVICES; i++) {
    const name = {
      namespace: `ns${i % 50}`, name: `svc${i}`, port: 'http', protocol: 'TCP' as const,
    };
    const key = servicePortKey(name);
    services.set(key, {
      name, clusterIP: ip((10 << 8) | 96, i + 1), port: 80, protocol: 'TCP',
      nodePort: i % 10 === 0 ? 30000 + (i / 10) : 0, loadBalancerVIPs: [],
      sessionAffinityClientIP: rand() < 0.05, stickyMaxAgeSeconds: 10800, externalIPs: [],
      loadBalancerSourceRanges: [], healthCheckNodePort: 0, externalPolicyLocal: false,
      internalPolicyLocal: false, hintsAnnotation: '',
    });
    const eps: EndpointInfo[] = [];
    for (let j = 0; j < EPS; j++) {
      const addr = ip((10 << 8) | 244, ++podN);
      const local = rand() < 0.1;
      eps.push({ ip: addr, port: 8080, endpoint: `${addr}:8080`, isLocal: local, ready: true,
        serving: true, terminating: false, nodeName: local ? 'node-a' : 'node-b' });
    }
    endpoints.set(key, eps);
  }
  return { services, endpoints };
}

const config: ProxierConfig = {
  mode: 'ipvs', family: 'IPv4', nodeName: 'node-a', nodeIPs: ['172.18.0.2'],
  detectLocal: { mode: 'ClusterCIDR', cidrs: ['10.244.0.0/16'] }, masqueradeBit: 14,
  masqueradeAll: false, localhostNodePorts: true, nodePortAddresses: [],
  serviceCIDRs: ['10.96.0.0/12'],
  minSyncPeriodMs: 1000, syncPeriodMs: 30000, ipvsScheduler: 'rr', ipvsStrictARP: false,
  capabilities: { randomFully: false, nfacct: false },
};

const { services, endpoints } = cluster(42);

const cpu = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
for (let r = 0; r < 3; r++) {
  let t = cpu(); const lap = (l: string) => { const n = cpu(); console.log(l, (n - t).toFixed(0)); t = n; };
  const ipvs = new IpvsModel(); const sets = new ActiveIpSets();
  const ctx: any = { ipvs, graceful: new GracefulTermination(() => 0), sets, scheduler: 'rr',
    topology: topologyContextOf(config), nodeIP: '172.18.0.2', nodeAddresses: new Set(['172.18.0.2']),
    nodePortIPs: ['172.18.0.2'], initialSync: true, alreadyBound: new Set(), activeServices: new Set(),
    activeBindAddrs: new Set(), lbNoNodeAccess: [], origins: new Map() };
  for (const key of [...services.keys()].sort()) syncServicePort(ctx, services.get(key)!, endpoints.get(key) ?? []);
  lap('services');
  ipvs.takeOps(); lap('takeOps');
  const txt = ipvs.formatSave(); lap('formatSave ' + txt.length);
  const c = ipvs.clone(); lap('clone');
  const ips = formatIpsetSave(sets.toIpSets('IPv4')); lap('ipsets ' + ips.length);
  writeIptablesRules({ config, sets, lbNoNodeAccess: [], mark: '0x4000' }); lap('iptables');
  void c;
}
