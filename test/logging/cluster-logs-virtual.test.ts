// Cluster-level logging on a virtual `kdp up` cluster: the kubelets' container log files and
// the components' lines land in the data dir's log store, a deleted pod's lines stay
// selectable by its labels, and `kdp logs` reads the store after the cluster stopped.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import type { KubeObject } from '../../src/client/types.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';

const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;

const pod = (name: string, labels: Record<string, string>, nodeName?: string): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'app', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] },
}) as KubeObject;

describe('cluster logs on a virtual cluster', () => {
  const root = mkdtempSync(join(tmpdir(), 'kdp-logs-virtual-'));
  let cluster: RunningCluster | undefined;
  const logs = async (...a: string[]) => {
    const r = await kdp('logs', '--data-dir', root, ...a);
    expect(r.code, r.err).toBe(0);
    return r.out;
  };

  beforeAll(async () => {
    cluster = await startCluster({ paths: dataDirPaths(root), nodes: 2, port: 0, proxyMode: 'iptables',
      timeScale: 10, progress: () => {}, dns: false });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('kdp logs -l app=web --since 1m returns the lines of a pod deleted a moment before', async () => {
    const c = cluster!;
    await c.client.create(PODS, pod('web-gone', { app: 'web' }, 'n2'));
    await c.client.create(PODS, pod('other', { app: 'db' }, 'n1'));
    await waitFor(async () => (await c.client.list<Pod>(PODS)).items
      .every((p) => p.status?.containerStatuses?.every((s) => s.state?.running)));
    await waitFor(async () => (await logs('-l', 'app=web')).includes('web-gone'), 20_000);
    await c.client.delete(PODS, 'web-gone');
    await waitFor(async () => !(await c.client.list<Pod>(PODS)).items.some((p) => p.metadata.name === 'web-gone'));
    await waitFor(async () => !existsSync(join(root, 'nodes', 'n2', 'pods'))
      || !(await import('node:fs')).readdirSync(join(root, 'nodes', 'n2', 'pods')).some((d) => d.includes('web-gone')), 20_000);
    const out = await logs('-l', 'app=web', '--since', '1m');
    const lines = out.trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l).toMatch(/^\S+Z n2 default\/web-gone\/app: /);
    expect(out).not.toContain('other');
  });

  it('keeps the components\' lines: kubelet per node, scheduler, controller manager and API server', async () => {
    const c = cluster!;
    await c.client.create(PODS, pod('sched-me', { app: 'sched' }));
    await waitFor(async () => (await logs('--component', 'scheduler')).includes('sched-me'), 20_000);
    const sched = await logs('--component', 'scheduler', '--grep', 'reason="Scheduled"');
    expect(sched).toMatch(/ - scheduler: "Event occurred" object="default\/sched-me" .*reason="Scheduled"/);
    await waitFor(async () => (await logs('--component', 'kubelet', '--node', 'n1')).includes('reason="Started"'), 20_000);
    const n1 = (await logs('--component', 'kubelet', '--node', 'n1')).trim().split('\n');
    for (const l of n1) expect(l).toMatch(/^\S+Z n1 kubelet: /);
    expect(await logs('--component', 'apiserver')).toMatch(/ - apiserver: "Serving securely on /);
    // A client's request over HTTPS (kdp status lists the nodes) is one line of the API server.
    expect((await kdp('status', '--data-dir', root)).code).toBe(0);
    await waitFor(async () => /"HTTP" verb="GET" URI="\/api\/v1\/nodes" latency="[\d.]+ms" userAgent="[^"]*" audit-ID="[^"]*" srcIP="[^"]+" resp=200/
      .test(await logs('--component', 'apiserver', '--grep', 'URI="/api/v1/nodes"')), 10_000);
    expect(await logs('--component', 'controller-manager', '--grep', 'reason="RegisteredNode"'))
      .toMatch(/ - controller-manager: "Event occurred" object="n1" .*reason="RegisteredNode"/);
  });

  it('reads the store after the cluster stopped', async () => {
    const before = await logs('-A');
    await cluster!.close();
    cluster = undefined;
    const after = await logs('-A');
    expect(after.startsWith(before.trimEnd().split('\n')[0]!)).toBe(true);
    expect(after).toContain('default/web-gone/app');
  });
});
