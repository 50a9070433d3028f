// Monitoring on a netns cluster: `kubectl top` (1.27 and 1.33) from the real processes — a busy
// pod (`while :; do :; done`) shows more CPU than an idle one and its node more than the other;
// the kubelet's /metrics, /metrics/resource and /stats/summary through the API server's node
// proxy (promtool accepts both texts); scaling a Deployment makes every node's kube-proxy sync
// (kubeproxy_sync_proxy_rules_duration_seconds_count grows on each).

import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import type { KubeObject } from '../../src/client/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { kubectlFor } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const DEPLOY = { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'default' } as const;
const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' } as const;

const shPod = (name: string, script: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { role: name } },
  spec: { nodeName: 'n1', terminationGracePeriodSeconds: 0,
    containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', script] }] } } as KubeObject);

/** millicores of a `kubectl top` cell (`250m`, `1`). */
const milli = (cell: string) => (cell.endsWith('m') ? Number(cell.slice(0, -1)) : Number(cell) * 1000);

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter']))('monitoring on a netns cluster', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-mon-')));
  const prefix = hostPrefixFor(paths);
  let cluster: RunningCluster;
  const kubectl = kubectlFor(paths.kubeconfig, { minor: 33 });

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'nftables', timeScale: 5, dataPlane: 'netns',
      progress: () => {} });
    await cluster.client.create(PODS, shPod('busy', 'while :; do :; done'));
    await cluster.client.create(PODS, shPod('idle', 'while :; do sleep 1; done'));
    await waitFor(async () => (await cluster.client.list<Pod>(PODS)).items.filter((p) =>
      p.status?.containerStatuses?.[0]?.state?.running).length === 2, 30_000, 'busy and idle running');
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
  }, 30_000);

  for (const minor of [27, 33]) {
    it(`kubectl 1.${minor} top: the busy pod uses more CPU than the idle one, and its node more than the other`, async () => {
      let cpu = new Map<string, number>();
      await waitFor(async () => {
        const r = await kubectl(['top', 'pods', '--containers'], { minor });
        cpu = new Map(r.out.trim().split('\n').slice(1).map((l) => l.split(/\s+/))
          .filter((c) => c[1] === 'main').map((c) => [c[0]!, milli(c[2]!)]));
        return cpu.has('busy') && cpu.has('idle');
      }, 30_000, 'top pods to show busy and idle');
      // The machine is shared (its load can be 10x its cores): the loop gets a share, not a core.
      expect(cpu.get('busy')!).toBeGreaterThan(20);
      expect(cpu.get('busy')!).toBeGreaterThan(3 * cpu.get('idle')! + 10);
      const nodes = await kubectl(['top', 'nodes'], { minor });
      expect(nodes.code, nodes.err).toBe(0);
      const row = (n: string) => nodes.out.split('\n').find((l) => l.startsWith(`${n} `))!.split(/\s+/);
      expect(milli(row('n1')[1]!)).toBeGreaterThan(milli(row('n2')[1]!));
      expect(row('n1')[3]).toMatch(/^\d+Mi$/);
    }, 60_000);
  }

  it('the kubelet\'s /metrics, /metrics/resource and /stats/summary through the node proxy; promtool accepts them', async () => {
    const raw = async (path: string) => {
      const r = await kubectl(['get', '--raw', `/api/v1/nodes/n1/proxy${path}`]);
      expect(r.code, r.err).toBe(0);
      return r.out;
    };
    const own = await raw('/metrics');
    expect(own).toMatch(/^kubelet_running_pods [2-9]$/m);
    expect(own).toMatch(/^kubelet_running_containers\{container_state="running"\} [2-9]$/m);
    expect(own).toMatch(/^kubelet_pod_start_sli_duration_seconds_count [1-9]/m);
    const resource = await raw('/metrics/resource');
    expect(resource).toMatch(/^container_cpu_usage_seconds_total\{container="main",namespace="default",pod="busy"\} [0-9.e+]+ \d+$/m);
    expect(resource).toMatch(/^node_memory_working_set_bytes [0-9.e+]+ \d+$/m);
    for (const text of [own, resource]) execFileSync('promtool', ['check', 'metrics'], { input: text });
    const summary = JSON.parse(await raw('/stats/summary'));
    expect(summary.node.nodeName).toBe('n1');
    const busy = summary.pods.find((p: { podRef: { name: string } }) => p.podRef.name === 'busy');
    expect(busy.containers[0].cpu.usageCoreNanoSeconds).toBeGreaterThan(0);
    expect(busy.containers[0].memory.workingSetBytes).toBeGreaterThan(0);
    // Done with the busy loop: give the shared CPUs back.
    await cluster.client.delete(PODS, 'busy', { gracePeriodSeconds: 0 });
  }, 60_000);

  it('scaling a Deployment makes every node\'s kube-proxy sync again', async () => {
    const scrape = async (node: string) => (await exec.run(process.execPath, ['-e', `
      require('node:http').get('http://127.0.0.1:10249/metrics', (r) => {
        let b = ''; r.on('data', (d) => b += d); r.on('end', () => process.stdout.write(b));
      }).on('error', (e) => { console.error(e.message); process.exit(1); });`],
    { netns: `${prefix}-${node}`, timeoutMs: 10_000 })).stdout;
    const count = (text: string) => Number(/^kubeproxy_sync_proxy_rules_duration_seconds_count(?:\{[^}]*\})? (\d+)$/m
      .exec(text)?.[1] ?? NaN);
    await cluster.client.create(DEPLOY, { apiVersion: 'apps/v1', kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default' },
      spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] } } } } as KubeObject);
    await cluster.client.create(SVC, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } } as KubeObject);
    const ready = (n: number) => waitFor(async () => (await cluster.client.list<Pod>(PODS, { labelSelector: 'app=web' }))
      .items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === n,
    30_000, `${n} web pods ready`);
    await ready(1);
    const before = new Map<string, number>();
    for (const node of ['n1', 'n2']) {
      // Settled: the first endpoint's sync is done when two scrapes agree.
      await waitFor(async () => {
        const c = count(await scrape(node));
        const same = before.get(node) === c;
        before.set(node, c);
        return same;
      }, 30_000, `${node} to settle`);
      expect(before.get(node)).toBeGreaterThan(0);
    }
    const r = await kubectl(['scale', 'deployment', 'web', '--replicas=3']);
    expect(r.code, r.err).toBe(0);
    await ready(3);
    for (const node of ['n1', 'n2']) {
      await waitFor(async () => count(await scrape(node)) > before.get(node)!, 30_000, `${node} to sync again`);
    }
  }, 90_000);
});
