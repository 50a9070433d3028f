// Sidecar containers on a virtual cluster (kdp up --virtual), through the whole stack with the
// real kubectl: a Job whose pod has a sidecar completes (the sidecar stops once the main
// container is done), a Deployment's pod counts its sidecar in READY, and the API server refuses
// what upstream refuses (restartPolicy other than Always on an init container, a probe on a
// regular one).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { kubectlFor, kubectlMissing } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';

const MINOR = kubectlMissing(33) ? 27 : 33;
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;

describe.runIf(!kubectlMissing(MINOR))('sidecar containers on a virtual cluster', () => {
  const root = mkdtempSync(join(tmpdir(), 'kdp-vside-'));
  const paths = dataDirPaths(root);
  let cluster: RunningCluster;
  const kubectl = kubectlFor(paths.kubeconfig, { minor: MINOR });
  const apply = (obj: object) => kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'iptables', timeScale: 20, dns: false,
      progress: () => {} });
  }, 60_000);
  afterAll(async () => {
    await cluster?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a Job with a sidecar completes; the sidecar ran beside the main container and stopped', async () => {
    expect((await apply({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'default' },
      spec: { template: { spec: { restartPolicy: 'Never',
        initContainers: [{ name: 'setup', image: 'busybox' }, { name: 'proxy', image: 'envoy', restartPolicy: 'Always' }],
        containers: [{ name: 'main', image: 'busybox' }] } } } })).code).toBe(0);
    const w = await kubectl(['wait', '--for=condition=complete', 'job/j', '--timeout=60s']);
    expect(w).toMatchObject({ code: 0, err: '' });
    const p = (await cluster.client.list<Pod>(PODS)).items.find((x) => x.metadata.labels?.['job-name'] === 'j')!;
    expect(p.status!.phase).toBe('Succeeded');
    expect(p.status!.initContainerStatuses!.map((c) => [c.name, Object.keys(c.state!)[0]]))
      .toEqual([['setup', 'terminated'], ['proxy', 'terminated']]);
    expect((await kubectl(['logs', p.metadata.name!, '-c', 'proxy'])).out)
      .toMatch(/started sidecar proxy \(image envoy\)\n.*stopped\n$/s);
  }, 90_000);

  it('a Deployment\'s pod counts its sidecar in READY; started and ready in initContainerStatuses', async () => {
    expect((await apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
      spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: {
        initContainers: [{ name: 'proxy', image: 'envoy', restartPolicy: 'Always',
          readinessProbe: { tcpSocket: { port: 15001 } } }],
        containers: [{ name: 'app', image: 'kdp/echo' }] } } } })).code).toBe(0);
    expect((await kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s'])).code).toBe(0);
    const p = await waitFor(async () => (await cluster.client.list<Pod>(PODS)).items
      .find((x) => x.metadata.labels?.app === 'web' && x.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')),
    30_000, 'a ready web pod');
    expect(p.status!.initContainerStatuses![0]).toMatchObject({ name: 'proxy', started: true, ready: true,
      state: { running: {} } });
    const row = (await kubectl(['get', 'pod', p.metadata.name!, '--no-headers'])).out.trim().split(/\s+/);
    expect(row.slice(1, 3)).toEqual(['2/2', 'Running']);
  }, 90_000);

  it('the API server refuses what upstream refuses, naming each field', async () => {
    const r = await apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bad', namespace: 'default' },
      spec: { initContainers: [{ name: 'i', image: 'busybox', restartPolicy: 'OnFailure' },
        { name: 'k', image: 'busybox', livenessProbe: { exec: { command: ['true'] } } }],
      containers: [{ name: 'c', image: 'busybox', restartPolicy: 'Always' }] } });
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: "Always"');
    expect(r.err).toContain('spec.initContainers[1].livenessProbe: Forbidden: may not be set for init containers without '
      + 'restartPolicy=Always');
    expect(r.err).toContain('spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers');
    expect((await cluster.client.list<Pod>(PODS)).items.some((x) => x.metadata.name === 'bad')).toBe(false);
  }, 30_000);
});
