// The store under the API server, side by side in one run (issue 16): pod creates/s and p99 at
// 50 concurrent clients through the API server's service (admission, validation, storage) on
// the embedded store, on a 1-member and a 3-member local TLS etcd cluster (`kdp up --etcd N`),
// and raw etcd puts of the same bodies at 50 concurrent clients (the ceiling). Then failover:
// writes in a loop on the 3-member cluster while its leader is killed (-9): the longest gap
// between acknowledged writes, and whether every acknowledged write is still there.
// Seeded bodies; wall time. Needs /usr/bin/etcd (Debian's etcd-server).
//   node bin/run-ts.js bench/etcd-store.ts   (BENCH_SECONDS=5 per phase by default)

import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { ADMIN_USER } from '../src/apiserver/app.js';
import { startApiServer } from '../src/apiserver/start.js';
import { buildInProcessClient } from '../src/client/in-process.js';
import type { KubeObject } from '../src/client/types.js';
import { ETCD_BINARY, startLocalEtcd, stopEtcdMember, type LocalEtcd } from '../src/cluster/etcd-cluster.js';
import { percentile, report, seededRandom } from './lib-bench.js';

if (!existsSync(ETCD_BINARY)) {
  console.log(`etcd-store: ${ETCD_BINARY} missing (apt-get install etcd-server); skipped`);
  process.exit(0);
}

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CLIENTS = 50;
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const rnd = seededRandom(16);

function pod(i: number): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}-${Math.floor(rnd() * 1e9).toString(36)}`,
    labels: { app: 'bench', tier: `t${i % 7}` } },
  spec: { containers: [{ name: 'c', image: 'kdp/echo', ports: [{ containerPort: 8080 }],
    resources: { requests: { cpu: '10m', memory: '16Mi' } } }] } } as KubeObject;
}

/** CLIENTS loops of `op` for SECONDS: ops/s and latency percentiles (ms). */
async function closedLoop(op: (i: number) => Promise<unknown>): Promise<{ rate: number; p50: number; p99: number }> {
  const lat: number[] = [];
  let i = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (performance.now() < end) {
      const t = performance.now();
      await op(i++);
      lat.push(performance.now() - t);
    }
  }));
  lat.sort((a, b) => a - b);
  return { rate: lat.length / SECONDS, p50: percentile(lat, 50), p99: percentile(lat, 99) };
}

async function apiOn(etcd: LocalEtcd | undefined) {
  const api = await startApiServer({ dataDir: mkdtempSync(join(tmpdir(), 'kdp-bench-etcd-')), port: 0,
    ...(etcd ? { etcd: { endpoints: [...etcd.endpoints], tls: etcd.tls } } : {}) });
  return { api, client: buildInProcessClient(api.server.service, ADMIN_USER) };
}

const results: Record<string, { rate: number; p50: number; p99: number }> = {};
const line = (name: string, r: { rate: number; p50: number; p99: number }) =>
  console.log(`${name.padEnd(44)} ${r.rate.toFixed(0).padStart(6)} /s   p50 ${r.p50.toFixed(1)} ms   p99 ${r.p99.toFixed(1)} ms`);

console.log(`etcd-store: ${CLIENTS} clients, ${SECONDS} s per phase`);
{
  const { api, client } = await apiOn(undefined);
  results.embedded = await closedLoop((i) => client.create(PODS, pod(i)));
  line('pod creates via API, embedded store', results.embedded);
  await api.close();
}
for (const size of [1, 3]) {
  const root = mkdtempSync(join(tmpdir(), `kdp-bench-etcd${size}-`));
  const etcd = await startLocalEtcd(root, size, () => {});
  try {
    const { api, client } = await apiOn(etcd);
    results[`etcd${size}`] = await closedLoop((i) => client.create(PODS, pod(i)));
    line(`pod creates via API, etcd ${size} member(s) (TLS)`, results[`etcd${size}`]!);
    await api.close();
    const raw = new Etcd3({ hosts: [...etcd.endpoints], credentials: { rootCertificate: etcd.tls.ca,
      certChain: etcd.tls.cert, privateKey: etcd.tls.key } });
    results[`raw${size}`] = await closedLoop((i) => raw.put(`/bench/raw/${i}`).value(JSON.stringify(pod(i))).exec());
    line(`raw etcd puts, ${size} member(s) (TLS)`, results[`raw${size}`]!);
    raw.close();

    if (size === 3) {
      // Failover: a write loop, the leader killed mid-way.
      const { api: api2, client: c2 } = await apiOn(etcd);
      const st = await new Etcd3({ hosts: [...etcd.endpoints], credentials: { rootCertificate: etcd.tls.ca,
        certChain: etcd.tls.cert, privateKey: etcd.tls.key } });
      const statuses = await Promise.all(etcd.layout.members.map(async (m, k) => {
        const one = new Etcd3({ hosts: etcd.endpoints[k]!, credentials: { rootCertificate: etcd.tls.ca,
          certChain: etcd.tls.cert, privateKey: etcd.tls.key } });
        try { const s = await one.maintenance.status(); return { m: m.name, leader: s.leader === s.header.member_id }; } finally { one.close(); }
      }));
      st.close();
      const leader = statuses.find((s) => s.leader)!.m;
      const acked: string[] = [];
      let last = performance.now();
      let worst = 0;
      let failed = 0;
      let stop = false;
      const loop = (async () => {
        for (let i = 0; !stop; i++) {
          const p = pod(100_000 + i);
          try {
            await c2.create(PODS, p);
            const now = performance.now();
            worst = Math.max(worst, now - last);
            last = now;
            acked.push(p.metadata.name!);
          } catch { failed++; }
        }
      })();
      await new Promise((r) => setTimeout(r, 1000));
      const killedAt = performance.now();
      await stopEtcdMember(root, leader, 'kill');
      const firstAfter = await (async () => {
        const n0 = acked.length;
        while (acked.length === n0) await new Promise((r) => setTimeout(r, 1));
        return performance.now() - killedAt;
      })();
      await new Promise((r) => setTimeout(r, 2000));
      stop = true;
      await loop;
      const stored = new Set((await c2.list(PODS)).items.map((x) => x.metadata.name));
      const lost = acked.filter((n) => !stored.has(n)).length;
      report('failover: leader kill -9 → next acknowledged write', firstAfter, 'ms');
      report('failover: longest gap between acknowledged writes', worst, 'ms');
      console.log(`failover: ${acked.length} writes acknowledged, ${failed} refused, ${lost} acknowledged writes lost`);
      await api2.close();
    }
  } finally {
    await etcd.stop();
  }
}
console.log(`ratios: API on etcd-1 / embedded ${(results.etcd1!.rate / results.embedded!.rate).toFixed(2)}, ` +
  `API on etcd-3 / embedded ${(results.etcd3!.rate / results.embedded!.rate).toFixed(2)}, ` +
  `API on etcd-3 / raw etcd-3 puts ${(results.etcd3!.rate / results.raw3!.rate).toFixed(2)}`);
