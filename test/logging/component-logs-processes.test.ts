// Every component's log reaches the cluster log store when components run as their own
// processes: `kdp apiserver` alone collects (its requests, the Events, the pods' files, the
// other processes' component files); a `kdp node` process's kubelet and kube-proxy lines are
// that node's (`kdp logs --component kubelet --node w1`, as `journalctl -u kubelet` there),
// its pods' output kept after they are deleted; and under `kdp up --etcd 1 --apiservers 2` the
// replica's requests and the etcd member's own log reach kdp up's store.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { buildHttpClient } from '../../src/client/http-client.js';
import { loadKubeconfig } from '../../src/client/kubeconfig.js';
import type { Client, KubeObject } from '../../src/client/types.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';

const KDP = fileURLToPath(new URL('../../bin/kdp.js', import.meta.url));
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
const HAVE_ETCD = existsSync('/usr/bin/etcd');
if (!HAVE_ETCD && process.env.CI === 'true') throw new Error('CI=true but /usr/bin/etcd is missing');

const logsOf = async (dataDir: string, ...a: string[]) => {
  const r = await kdp('logs', '--data-dir', dataDir, ...a);
  expect(r.code, r.err).toBe(0);
  return r.out;
};

describe('component logs of separate processes (kdp apiserver, kdp node)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-proclogs-'));
  const procs: ChildProcess[] = [];
  let client: Client;
  const start = (...args: string[]) => {
    const p = spawn(process.execPath, [KDP, ...args, '--data-dir', dataDir], { stdio: 'ignore' });
    procs.push(p);
    return p;
  };

  beforeAll(async () => {
    start('apiserver', '--port', '0');
    await waitFor(() => existsSync(join(dataDir, 'kubeconfig')), 30_000, 'the API server kubeconfig');
    client = buildHttpClient(loadKubeconfig(join(dataDir, 'kubeconfig')));
    start('controller-manager', '--time-scale', '10');
    start('node', '--name', 'w1', '--node-ip', '172.18.0.9', '--time-scale', '10');
    await waitFor(async () => (await client.get<KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }>(NODES, 'w1')
      .catch(() => undefined))?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    60_000, 'node w1 Ready');
  }, 120_000);

  afterAll(async () => {
    const exited = procs.map((p) => new Promise((r) => (p.exitCode !== null ? r(undefined) : p.once('exit', r))));
    for (const p of procs.reverse()) p.kill('SIGTERM');
    await Promise.race([Promise.all(exited), new Promise((r) => setTimeout(r, 10_000))]);
    for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('kdp logs --component kubelet --node w1 shows the node process\'s own lines and its Events', async () => {
    await waitFor(async () => {
      const out = await logsOf(dataDir, '--component', 'kubelet', '--node', 'w1');
      // Its standard error (the spool), and an Event its kubelet recorded (through the API).
      return /-?\S+Z w1 kubelet: kdp node w1 \(172\.18\.0\.9\) running: kubelet/.test(out) &&
        /w1 kubelet: "Event occurred" object="w1" .*reason="NodeReady"/.test(out);
    }, 30_000, 'the kubelet lines of w1');
    const other = await logsOf(dataDir, '--component', 'kubelet', '--node', 'n1');
    expect(other).toBe('');
  });

  it('the API server alone logs its requests to the store', async () => {
    await waitFor(async () => /- apiserver: "HTTP" verb="GET" URI="\/api\/v1\/nodes\/w1"/
      .test(await logsOf(dataDir, '--component', 'apiserver')), 30_000, 'the apiserver request lines');
  });

  it('a pod of the node process: its lines kept after it is deleted', async () => {
    await client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1', labels: { app: 'proc' } },
      spec: { nodeName: 'w1', containers: [{ name: 'c', image: 'kdp/echo' }] } } as KubeObject);
    await waitFor(async () => (await client.get<Pod>(PODS, 'p1')).status?.phase === 'Running', 60_000, 'p1 Running');
    await waitFor(async () => /w1 default\/p1\/c: \[kdp-virtual\] started container c/
      .test(await logsOf(dataDir, '-l', 'app=proc')), 30_000, 'p1\'s line in the store');
    await client.delete(PODS, 'p1');
    await waitFor(async () => (await client.list<Pod>(PODS)).items.length === 0, 60_000, 'p1 gone');
    expect(await logsOf(dataDir, '-l', 'app=proc', '--since', '5m')).toMatch(/default\/p1\/c: \[kdp-virtual\] started container c/);
  }, 120_000);
});

describe.skipIf(!HAVE_ETCD)('component logs under kdp up --etcd 1 --apiservers 2', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-halogs-'));
  let cluster: RunningCluster | undefined;

  beforeAll(async () => {
    cluster = await startCluster({ paths: dataDirPaths(dataDir), nodes: 1, port: 0, proxyMode: 'iptables',
      timeScale: 10, etcd: 1, apiservers: 2, dns: false, progress: () => {} });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('the replica\'s requests and the etcd member\'s log reach kdp up\'s store', async () => {
    const replica = new URL(cluster!.apiServers[1]!);
    const kc = loadKubeconfig(join(dataDir, 'kubeconfig'));
    const direct = buildHttpClient({ ...kc, server: replica.origin });
    await direct.list(NODES);
    await waitFor(async () => {
      const out = await logsOf(dataDir, '--component', 'apiserver');
      return out.includes(`"Serving securely on 127.0.0.1:${replica.port}"`) &&
        /apiserver: "HTTP" verb="GET" URI="\/api\/v1\/nodes"/.test(out);
    }, 30_000, 'the replica\'s lines');
    await waitFor(async () => /- etcd: \{"level":"info","ts":"[^"]+",.*"msg":/
      .test(await logsOf(dataDir, '--component', 'etcd')), 30_000, 'etcd\'s lines');
  }, 90_000);
});
