// NetworkPolicy at scale (issue 18): 1,000 pods in 20 namespaces on 10 nodes, 500 policies
// (pod/namespace selectors, AND peers, ipBlocks with except, numeric, named and range ports),
// seeded. Targets: compiling every node's kdp-netpol table ≤ 1 s; the full 1,000 × 1,000
// reachability matrix for one port ≤ 5 s.
// Run: node bin/run-ts.js bench/netpol-compile.ts [pods] [policies]

import type { Namespace, Pod } from '../src/api/types.js';
import { reachabilityMatrix } from '../src/netpol/matrix.js';
import { buildModel } from '../src/netpol/model.js';
import { compileNetpolNftables } from '../src/netpol/nftables.js';
import type { NetworkPolicy } from '../src/netpol/types.js';
import { report, seededRandom } from './lib-bench.js';

const PODS = Number(process.argv[2] ?? 1000);
const POLICIES = Number(process.argv[3] ?? 500);
const NS = 20;
const NODES = 10;
const APPS = 50;

const rand = seededRandom(18);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const namespaces: Namespace[] = Array.from({ length: NS }, (_, i) => ({ apiVersion: 'v1',
  kind: 'Namespace', metadata: { name: `ns${i}`, labels: { team: `t${i % 5}` } } }) as Namespace);
const pods: Pod[] = Array.from({ length: PODS }, (_, i) => {
  const node = i % NODES;
  const ip = `10.244.${node}.${Math.floor(i / NODES) + 2}`;
  return { apiVersion: 'v1', kind: 'Pod',
    metadata: { name: `p${i}`, namespace: `ns${i % NS}`,
      labels: { app: `app${Math.floor(rand() * APPS)}`, tier: pick(['web', 'db', 'cache']) } },
    spec: { nodeName: `n${node}`, containers: [{ name: 'c', image: 'x',
      ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] }] },
    status: { podIP: ip, podIPs: [{ ip }] } } as unknown as Pod;
});
const policies: NetworkPolicy[] = Array.from({ length: POLICIES }, (_, i) => {
  const peer = () => pick([
    { podSelector: { matchLabels: { app: `app${Math.floor(rand() * APPS)}` } } },
    { namespaceSelector: { matchLabels: { team: `t${Math.floor(rand() * 5)}` } } },
    { namespaceSelector: { matchLabels: { team: `t${Math.floor(rand() * 5)}` } },
      podSelector: { matchLabels: { tier: pick(['web', 'db', 'cache']) } } },
    { ipBlock: { cidr: '10.244.0.0/16', except: [`10.244.${Math.floor(rand() * NODES)}.0/24`] } },
  ]);
  const port = () => pick([{ port: 80 }, { port: 'http' }, { port: 8000, endPort: 9000 },
    { protocol: 'UDP', port: 53 }]);
  return { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
    metadata: { name: `np${i}`, namespace: `ns${i % NS}` },
    spec: { podSelector: { matchLabels: { app: `app${Math.floor(rand() * APPS)}` } },
      ingress: [{ from: [peer(), peer()], ports: [port()] }],
      ...(i % 3 === 0 ? { egress: [{ to: [peer()], ports: [port()] }] } : {}) } } as NetworkPolicy;
});
const nodeIPs = new Map(Array.from({ length: NODES }, (_, i) => [`n${i}`, [`172.18.0.${i + 2}`]]));

const model = buildModel({ pods, namespaces, policies, nodeIPs });
let t = performance.now();
let bytes = 0;
for (const n of nodeIPs.keys()) bytes += compileNetpolNftables(model, { node: n }).length;
const compileMs = performance.now() - t;
report(`compile ${NODES} node tables (${PODS} pods, ${POLICIES} policies, ${bytes} bytes)`,
  compileMs, 'ms', { op: '<=', value: 1000 });
t = performance.now();
const m = reachabilityMatrix(model, 8080, 'TCP');
const matrixMs = performance.now() - t;
report(`reachability matrix ${PODS}x${PODS} TCP/8080 (${m.classes} classes, `
  + `${m.evaluations} evaluations)`, matrixMs, 'ms', { op: '<=', value: 5000 });
