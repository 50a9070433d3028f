// Join time (issue 19): from the start of a `kdp node join` process to its Node Ready, on a
// simulated host of a 3-host routed lab (VXLAN), as a ratio to the anchor — a `kdp node --host K`
// process started beside the lab on the same host, to its Node Ready — in the same run. The join
// runs as a lab user runs it: `kdp sh h3 -- kdp node join <kdp up's line> --data-dir <its own>`,
// so it pays discovery (cluster-info JWS, CA pin), the TLS bootstrap (CSR approved and signed)
// and its own data dir (native echo build) on top of what the anchor does. The order of the two
// in each round is seeded. p50 over N rounds. Needs root.
//   node bin/run-ts.js bench/node-join.ts [rounds, default 5]

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Node } from '../src/api/types.js';
import { hostPrefixFor, joinedNodeStateFile } from '../src/cluster/data-plane-netns.js';
import { dataDirPaths, type DataDirPaths } from '../src/cluster/data-dir.js';
import { startCluster } from '../src/cluster/up.js';
import { cleanupHost } from '../src/host/cleanup.js';
import { buildHostExec } from '../src/host/exec.js';
import { listNetns } from '../src/host/netns.js';
import { percentile, seededRandom } from './lib-bench.js';

const KDP = fileURLToPath(new URL('../bin/kdp.js', import.meta.url));
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
const ROUNDS = Number(process.argv[2] ?? 5);

if (process.getuid?.() !== 0) {
  console.log('node-join: needs root (network namespaces); skipped');
  process.exit(0);
}
const rng = seededRandom(19);
const exec = buildHostExec();
const lab = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-bj-')));
const prefix = hostPrefixFor(lab);
const cluster = await startCluster({ paths: lab, nodes: 1, port: 0, proxyMode: 'iptables', timeScale: 10, dataPlane: 'netns',
  systemPods: true, dns: false, controlPlaneTaint: true, progress: () => {}, hosts: { count: 3, link: 'routed' }, backend: 'vxlan' });
const ready = async (name: string) => {
  for (;;) {
    const n = await cluster.client.get<Node>(NODES, name).catch(() => undefined);
    if (n?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return;
    await new Promise((r) => setTimeout(r, 20));
  }
};
const joinArgs = cluster.joinCommand.split(' ').slice(1);
const own: DataDirPaths[] = [];

/** Starts the process, waits for its Node Ready (ms), then kills its group and removes its node. */
async function timed(name: string, argv: string[], state: string): Promise<number> {
  const t0 = performance.now();
  const p: ChildProcess = spawn(process.execPath, argv, { stdio: 'ignore', detached: true });
  try {
    await Promise.race([ready(name), new Promise((_, rej) => setTimeout(() => rej(new Error(`${name} not Ready in 120 s`)), 120_000))]);
    return performance.now() - t0;
  } finally {
    try { process.kill(-p.pid!, 'SIGKILL'); } catch { /* gone */ }
    await cleanupHost(exec, state, `${prefix}-${name}`);
    await cluster.client.delete(NODES, name).catch(() => undefined);
  }
}

const anchor: number[] = [];
const joined: number[] = [];
try {
  for (let r = 0; r < ROUNDS; r++) {
    const runs = [
      async () => anchor.push(await timed(`a${r}`, [KDP, 'node', '--name', `a${r}`, '--host', '2', '--time-scale', '10',
        '--data-dir', lab.root], joinedNodeStateFile(lab, `a${r}`))),
      async () => {
        const dir = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-bj-h3-')));
        own.push(dir);
        joined.push(await timed(`j${r}`, [KDP, 'sh', 'h3', '--data-dir', lab.root, '--', process.execPath, KDP, ...joinArgs,
          '--name', `j${r}`, '--time-scale', '10', '--data-dir', dir.root], joinedNodeStateFile(dir, `j${r}`)));
      },
    ];
    if (rng() < 0.5) runs.reverse();
    for (const run of runs) await run();
  }
} finally {
  await cluster.close();
  await cleanupHost(exec, lab.hostState, prefix);
  for (const d of [lab, ...own]) rmSync(d.root, { recursive: true, force: true });
}
const p50 = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);
console.log(`start to Node Ready on a simulated host (3-host routed lab, VXLAN, time scale 10), p50 of ${ROUNDS} rounds:`);
console.log(`  anchor  kdp node --host 2:              ${p50(anchor).toFixed(0)} ms  (1.00×)  [${anchor.map((x) => x.toFixed(0)).join(', ')}]`);
console.log(`  join    kdp sh h3 -- kdp node join:      ${p50(joined).toFixed(0)} ms  (${(p50(joined) / p50(anchor)).toFixed(2)}× anchor)  ` +
  `[${joined.map((x) => x.toFixed(0)).join(', ')}]`);
const left = (await listNetns(exec)).filter((n) => n.startsWith(prefix));
if (left.length) console.log(`warning: left namespaces ${left.join(', ')}`);
