// Failover (root, netns mode): a request loop against a ClusterIP Service while one node fails
// each of the three ways (`kdp node stop|partition|crash`), then comes back. 3 nodes, a
// Deployment of 4 kdp/echo pods per scenario, the client on n1 (its node namespace), a new TCP
// connection every 25 ms with a 500 ms timeout. Per scenario: requests, failed ones, the outage
// window (first → last failure) and when the Service was whole again (every request answered by
// a pod on a healthy node), in wall seconds and in real-cluster seconds (× time scale: kdp runs
// the control loops `--time-scale` times faster, so 5 s here is 50 s of a real cluster's timers).
// Usage: node bin/run-ts.js bench/node-failure.ts [iptables|nftables] [timeScale]

import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Node, Pod } from '../src/api/types.js';
import type { KubeObject } from '../src/client/types.js';
import { hostPrefixFor } from '../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../src/cluster/data-dir.js';
import type { NodeFailure } from '../src/cluster/node-set.js';
import { startCluster } from '../src/cluster/up.js';
import { cleanupHost } from '../src/host/cleanup.js';
import { buildHostExec } from '../src/host/exec.js';
import { waitFor } from '../test/helpers/cluster.js';

if (process.getuid?.() !== 0) {
  console.log('node-failure: needs root (network namespaces); skipped');
  process.exit(0);
}

const mode = (process.argv[2] ?? 'nftables') as 'iptables' | 'nftables';
const scale = Number(process.argv[3] ?? 10);
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const DEPLOY = { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'default' } as const;
const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' } as const;
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;

// One line per request: `<ms since start> ok <pod>` or `<ms> fail <error>`.
const LOOP = `
const net = require('node:net');
const [host, port] = process.argv.slice(1);
const t0 = Date.now();
setInterval(() => {
  const s = net.connect(Number(port), host);
  let out = '', done = false;
  const end = (line) => { if (done) return; done = true; s.destroy(); console.log((Date.now() - t0) + ' ' + line); };
  s.setTimeout(500, () => end('fail timeout'));
  s.on('connect', () => s.write('hi\\n'));
  s.on('data', (d) => { out += d; const m = /pod=(\\S+)/.exec(out); if (m) end('ok ' + m[1]); });
  s.on('error', (e) => end('fail ' + e.code));
  s.on('end', () => end('fail eof'));
}, 25);
`;

const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-fail-')));
const exec = buildHostExec();
const cluster = await startCluster({ paths, nodes: 3, port: 0, proxyMode: mode, timeScale: scale,
  dataPlane: 'netns', progress: () => {} });
const client = cluster.client;
const spec = (name: string) => cluster.nodes.find((n) => n.name === name)!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

console.log(`node-failure: ${mode}, 3 nodes, time scale ${scale} (1 s here = ${scale} s of a real cluster's timers)`);
console.log('| scenario | failed node | requests | failed | outage window s (real-cluster s) | whole again after s (real-cluster s) |');
console.log('|---|---|---|---|---|---|');
try {
  await client.create(SVC, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' },
    spec: { clusterIP: '10.96.0.90', selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } });
  for (const how of (process.env.BENCH_ONLY?.split(',') ?? ['stopped', 'partitioned', 'crashed']) as NodeFailure[]) {
    const name = `web-${how}`;
    await client.create(DEPLOY, {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'default' },
      spec: { replicas: 4, selector: { matchLabels: { app: 'web', run: name } },
        template: { metadata: { labels: { app: 'web', run: name } },
          spec: { containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] } } },
    });
    const mine = async () => (await client.list<Pod>(PODS)).items.filter((p) => p.metadata.labels?.run === name);
    const podsReady = async () => (await mine()).filter((p) => !p.metadata.deletionTimestamp &&
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    await waitFor(async () => (await podsReady()).length === 4, 60_000, `${name} ready`);
    // Only this scenario's pods serve: earlier Deployments go.
    for (const old of ['stopped', 'partitioned', 'crashed']) {
      if (old !== how) await client.delete(DEPLOY, `web-${old}`).catch(() => undefined);
    }
    await waitFor(async () => (await client.list<Pod>(PODS)).items
      .every((p) => p.metadata.labels?.run === name || p.metadata.deletionTimestamp), 60_000, 'old pods gone');
    const byNode = new Map<string, number>();
    for (const p of await mine()) byNode.set(p.spec!.nodeName!, (byNode.get(p.spec!.nodeName!) ?? 0) + 1);
    const victim = ['n2', 'n3'].sort((a, b) => (byNode.get(b) ?? 0) - (byNode.get(a) ?? 0))[0]!;
    const onVictim = new Set((await mine()).filter((p) => p.spec!.nodeName === victim).map((p) => p.metadata.name!));
    await sleep(2000); // every node's rules have the four endpoints

    const loop = spawn('nsenter', [`--net=/run/netns/${hostPrefixFor(paths)}-n1`, '--', process.execPath, '-e', LOOP,
      '10.96.0.90', '80'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines: Array<{ t: number; ok: boolean; pod: string }> = [];
    createInterface({ input: loop.stdout! }).on('line', (l) => {
      const [t, verdict, what] = l.split(' ');
      lines.push({ t: Number(t), ok: verdict === 'ok', pod: what ?? '' });
    });
    await sleep(1000);
    const tFail = lines.at(-1)?.t ?? 0;
    const t0 = Date.now();
    let watchTimer: NodeJS.Timeout | undefined;
    if (process.env.BENCH_VERBOSE) {
      let last = '';
      watchTimer = setInterval(async () => {
        const slices = (await client.list<KubeObject>({ group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', namespace: 'default' })).items;
        const eps = slices.flatMap((x: any) => x.endpoints ?? []).map((e: any) => `${e.nodeName}:${e.conditions?.ready ? 'R' : ''}${e.conditions?.serving ? 'S' : ''}${e.conditions?.terminating ? 'T' : ''}`).sort().join(' ');
        if (eps !== last) console.log(`  ${((Date.now() - t0) / 1000).toFixed(1)}s endpoints ${eps}`);
        last = eps;
      }, 200);
    }
    await cluster.nodeSet.fail(victim, how);
    // Whole again: the victim's pods evicted (or, for stop, still answering), 4 ready pods on
    // healthy nodes, and 2 s of requests all answered by pods not on the failed node.
    const whole = async () => {
      const ready = (await podsReady()).filter((p) => p.spec!.nodeName !== victim);
      if (ready.length < 4) return false;
      const recent = lines.filter((l) => l.t > (lines.at(-1)?.t ?? 0) - 2000);
      return recent.length > 40 && recent.every((l) => l.ok && !onVictim.has(l.pod));
    };
    await waitFor(whole, 900_000 / scale + 60_000, `${how}: service whole again`);
    loop.kill();
    clearInterval(watchTimer);
    const after = lines.filter((l) => l.t >= tFail);
    const failed = after.filter((l) => !l.ok);
    const window = failed.length ? (failed.at(-1)!.t - failed[0]!.t) / 1000 : 0;
    const wholeAt = (after.at(-1)!.t - 2000 - tFail) / 1000;
    console.log(`| ${how} | ${victim} (${byNode.get(victim) ?? 0} of 4 pods) | ${after.length} | ${failed.length} | ` +
      `${window.toFixed(1)} (${(window * scale).toFixed(0)}) | ${wholeAt.toFixed(1)} (${(wholeAt * scale).toFixed(0)}) |`);
    if (process.env.BENCH_VERBOSE) {
      // Flows the client's kernel still sends to a gone endpoint: a reused source port meets its
      // old conntrack entry (SYN_SENT lives 120 s), whatever the rules say now.
      const victimIPs = new Set((await client.list<Pod>(PODS)).items.filter((p) => onVictim.has(p.metadata.name!))
        .map((p) => p.status?.podIP).filter(Boolean));
      const ct = await exec.run('conntrack', ['-L', '-p', 'tcp', '--orig-dst', '10.96.0.90'],
        { netns: `${hostPrefixFor(paths)}-n1` }).catch(() => ({ stdout: '' }));
      const stale = ct.stdout.split('\n').filter((l) => /SYN_SENT/.test(l) && [...victimIPs].some((ip) => l.includes(`src=${ip} `)));
      console.log(`  conntrack on n1: ${stale.length} SYN_SENT flows still DNATed to ${victimIPs.size} gone endpoints`);
      const sec = new Map<number, string[]>();
      for (const f of failed) sec.set(Math.floor((f.t - tFail) / 1000), [...(sec.get(Math.floor((f.t - tFail) / 1000)) ?? []), f.pod]);
      for (const [k, v] of sec) console.log(`  +${k}s: ${v.length} failed (${[...new Set(v)].join(',')})`);
    }
    await cluster.nodeSet.start(spec(victim));
    await waitFor(async () => (await client.get<Node>(
      NODES, victim)).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True', 60_000, `${victim} Ready`);
  }
} finally {
  await cluster.close();
  await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
}
