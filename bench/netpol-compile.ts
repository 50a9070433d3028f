// NetworkPolicy at scale (issue 18): 1,000 pods in 20 namespaces on 10 nodes, 500 policies
// (pod/namespace selectors, AND peers, ipBlocks with except, numeric, named and range ports),
// seeded. Targets: compiling every node's kdp-netpol table ≤ 1 s; the full 1,000 × 1,000
// reachability matrix for one port ≤ 5 s; an incremental update (one pod relabelled, one policy
// edited → the node's new table and its delta) ≤ 20 ms, as a node agent makes it: the model
// rebuilt from the informer objects, the node's incremental compiler (node-compiler.ts), the
// transaction of just the changed elements/chains (delta.ts).
// Run: node bin/run-ts.js bench/netpol-compile.ts [pods] [policies]

import type { Namespace, Pod } from '../src/api/types.js';
import { reachabilityMatrix } from '../src/netpol/matrix.js';
import { buildModel } from '../src/netpol/model.js';
import { compileNetpolNftables } from '../src/netpol/nftables.js';
import { netpolDelta } from '../src/netpol/delta.js';
import { buildNodeCompiler } from '../src/netpol/node-compiler.js';
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

// Incremental updates, as a node's policy controller does them: the changed object → the
// node's model → its incremental compiler → the delta against the table it applied last. Target
// ≤ 20 ms per change. Median of REPEAT, one pod relabelled and one policy edited (each change
// made to the base objects, so the compiler also sees the previous change undone).
const REPEAT = 15;
const node = 'n0';
const compiler = buildNodeCompiler(node);
let applied = compiler.compile(model);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
function update(change: (i: number) => { pods: Pod[]; policies: NetworkPolicy[] }): {
  ms: number; modelMs: number; compileMs: number; deltaMs: number; lines: number; full: number;
  chains: number; sets: number } {
  const all: number[] = [];
  const parts = { model: [] as number[], compile: [] as number[], delta: [] as number[] };
  let lines = 0;
  let full = 0;
  let chains = 0;
  let sets = 0;
  for (let i = 0; i < REPEAT; i++) {
    const input = change(i);
    const t0 = performance.now();
    const m2 = buildModel({ pods: input.pods, namespaces, policies: input.policies, nodeIPs });
    const t1 = performance.now();
    const text = compiler.compile(m2);
    const t2 = performance.now();
    const delta = netpolDelta(applied, text);
    const t3 = performance.now();
    applied = text;
    all.push(t3 - t0);
    parts.model.push(t1 - t0);
    parts.compile.push(t2 - t1);
    parts.delta.push(t3 - t2);
    chains += compiler.last.chains;
    sets += compiler.last.sets;
    if (delta === undefined) full++;
    else lines += delta.split('\n').length - 1;
  }
  return { ms: median(all), modelMs: median(parts.model), compileMs: median(parts.compile),
    deltaMs: median(parts.delta), lines: Math.round(lines / REPEAT), full,
    chains: Math.round(chains / REPEAT), sets: Math.round(sets / REPEAT) };
}
const what = (u: ReturnType<typeof update>): string => `model ${u.modelMs.toFixed(1)} ms, compile `
  + `${u.compileMs.toFixed(1)} ms (${u.chains} chains, ${u.sets} sets recomputed), delta ${u.deltaMs.toFixed(1)} ms; `
  + `${u.full ? `${u.full}/${REPEAT} full rewrites` : `${u.lines} delta lines`}`;
const relabelled = update((i) => ({ policies, pods: pods.map((p, k) => (k === 10 * i ? { ...p,
  metadata: { ...p.metadata, labels: { ...p.metadata.labels, app: `app${(i * 7) % APPS}` } } } : p)) }));
report(`incremental: one pod relabelled → node ${node}'s delta (${what(relabelled)})`,
  relabelled.ms, 'ms', { op: '<=', value: 20 });
const edited = update((i) => ({ pods, policies: policies.map((np, k) => (k === i ? { ...np, spec: { ...np.spec,
  ingress: [{ ...np.spec.ingress![0]!, ports: [{ port: 9000 + i }] }] } } : np)) }));
report(`incremental: one policy edited → node ${node}'s delta (${what(edited)})`,
  edited.ms, 'ms', { op: '<=', value: 20 });
