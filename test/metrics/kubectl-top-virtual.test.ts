// `kubectl top` (kubectl 1.27 and 1.33) on a virtual kdp up cluster: metrics.k8s.io is in
// discovery with its APIService Available, nodes and pods show the virtual model's usage (a
// container uses its CPU and memory requests), with -A, -n, -l, --containers and --sort-by.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import type { KubeObject } from '../../src/client/types.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { kubectlFor, kubectlMissing } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';

const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;

function pod(name: string, node: string, cpu: string, memory: string, labels: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels },
    spec: { nodeName: node, containers: [
      { name: 'app', image: 'kdp/echo', resources: { requests: { cpu, memory } } },
      { name: 'side', image: 'kdp/echo', resources: { requests: { cpu: '5m', memory: '2Mi' } } }] } } as KubeObject;
}

describe.each([27, 33])('kubectl 1.%i top on a virtual cluster', (minor) => {
  const skip = kubectlMissing(minor);
  const root = mkdtempSync(join(tmpdir(), `kdp-top-${minor}-`));
  let cluster: RunningCluster | undefined;
  const kubectl = kubectlFor(dataDirPaths(root).kubeconfig, { minor });

  beforeAll(async () => {
    if (skip) return;
    cluster = await startCluster({ paths: dataDirPaths(root), nodes: 2, port: 0, proxyMode: 'iptables',
      timeScale: 10, progress: () => {} });
    await cluster.client.create(PODS, pod('big', 'n1', '250m', '64Mi', { app: 'web', size: 'big' }));
    await cluster.client.create(PODS, pod('small', 'n2', '100m', '16Mi', { app: 'web', size: 'small' }));
    await waitFor(async () => (await cluster!.client.list<Pod>(PODS)).items
      .every((p) => p.status?.containerStatuses?.every((c) => c.state?.running)));
    // Two collector rounds after the pods run (interval 1.5 s at time scale 10).
    await waitFor(async () => (await kubectl(['top', 'pods'])).out.includes('small'), 30_000);
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it.skipIf(skip)('the group is discovered and its APIService is Available', async () => {
    const groups = await kubectl(['api-versions']);
    expect(groups.out.split('\n')).toContain('metrics.k8s.io/v1beta1');
    const res = await kubectl(['api-resources', '--api-group=metrics.k8s.io', '-o', 'name']);
    expect(res.out.trim().split('\n').sort()).toEqual(['nodes.metrics.k8s.io', 'pods.metrics.k8s.io']);
    const svc = await kubectl(['get', 'apiservice', 'v1beta1.metrics.k8s.io']);
    expect(svc.out).toMatch(/v1beta1\.metrics\.k8s\.io\s+Local\s+True\s/);
  });

  it.skipIf(skip)('top nodes: every node with cores, percent and memory', async () => {
    const r = await kubectl(['top', 'nodes']);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+CPU\(cores\)\s+CPU(\(%\)|%)\s+MEMORY\(bytes\)\s+MEMORY(\(%\)|%)\s*$/);
    // n1: node 50m + big 250m + 5m + coredns? — at least the pod's request and the node's own.
    const n1 = lines.find((l) => l.startsWith('n1 '))!;
    const [, cpu, , mem] = n1.split(/\s+/);
    expect(Number(cpu!.replace('m', ''))).toBeGreaterThanOrEqual(300);
    expect(Number(mem!.replace('Mi', ''))).toBeGreaterThanOrEqual(128 + 64 + 2);
    expect(lines.some((l) => l.startsWith('n2 '))).toBe(true);
  });

  it.skipIf(skip)('top pods --containers -A, -l and --sort-by', async () => {
    const all = await kubectl(['top', 'pods', '-A', '--containers']);
    expect(all.code, all.err).toBe(0);
    expect(all.out).toMatch(/^NAMESPACE\s+POD\s+NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
    expect(all.out).toMatch(/\ndefault\s+big\s+app\s+250m\s+64Mi/);
    expect(all.out).toMatch(/\ndefault\s+big\s+side\s+5m\s+2Mi/);
    const sel = await kubectl(['top', 'pods', '-n', 'default', '-l', 'size=small']);
    expect(sel.out.trim().split('\n').slice(1).map((l) => l.split(/\s+/)[0])).toEqual(['small']);
    expect(sel.out).toMatch(/\nsmall\s+105m\s+18Mi/);
    const sorted = await kubectl(['top', 'pods', '-l', 'app=web', '--sort-by=memory']);
    expect(sorted.out.trim().split('\n').slice(1).map((l) => l.split(/\s+/)[0])).toEqual(['big', 'small']);
    const one = JSON.parse((await kubectl(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/big'])).out);
    expect(one).toMatchObject({ kind: 'PodMetrics', apiVersion: 'metrics.k8s.io/v1beta1',
      metadata: { name: 'big', namespace: 'default', labels: { app: 'web', size: 'big' } } });
    expect(one.window).toMatch(/^[0-9.]+(ms|s)$/);
    expect(one.containers).toContainEqual({ name: 'app', usage: { cpu: '250m', memory: '64Mi' } });
  });

  it.skipIf(skip)('the kubelet\'s /metrics and /metrics/resource through the node proxy', async () => {
    const own = await kubectl(['get', '--raw', '/api/v1/nodes/n1/proxy/metrics']);
    expect(own.code, own.err).toBe(0);
    expect(own.out).toMatch(/^kubelet_running_pods [1-9]\d*$/m);
    const res = await kubectl(['get', '--raw', '/api/v1/nodes/n1/proxy/metrics/resource']);
    expect(res.out).toMatch(/^container_cpu_usage_seconds_total\{container="app",namespace="default",pod="big"\} /m);
  });

  it.skipIf(skip)('top of one node and of one pod', async () => {
    const node = await kubectl(['top', 'node', 'n2']);
    expect(node.code, node.err).toBe(0);
    expect(node.out.trim().split('\n').slice(1).map((l) => l.split(/\s+/)[0])).toEqual(['n2']);
    const one = await kubectl(['top', 'pod', 'small', '--containers']);
    expect(one.out).toMatch(/\nsmall\s+app\s+100m\s+16Mi/);
    const missing = await kubectl(['top', 'pod', 'nope']);
    expect(missing.code).not.toBe(0);
    expect(missing.err).toMatch(/not found/);
  });

  it.skipIf(skip)('top pods --sort-by=cpu', async () => {
    const sorted = await kubectl(['top', 'pods', '-l', 'app=web', '--sort-by=cpu']);
    expect(sorted.out.trim().split('\n').slice(1).map((l) => l.split(/\s+/)[0])).toEqual(['big', 'small']);
  });

  it.skipIf(skip)('pods without metrics: "metrics not available yet"; no pods: "No resources found"', async () => {
    // Bound to a node that does not run: the pod exists, nothing measures it.
    await cluster!.client.create(PODS, pod('nowhere', 'n9', '1m', '1Mi', { app: 'ghost' }));
    const ghost = await kubectl(['top', 'pods', '-l', 'app=ghost']);
    expect(ghost.code).not.toBe(0);
    expect(ghost.err).toContain('error: metrics not available yet');
    const none = await kubectl(['top', 'pods', '-l', 'app=nothing']);
    expect(none.code).toBe(0);
    expect(none.err + none.out).toContain('No resources found in default namespace.');
  });
});
