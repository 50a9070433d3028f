// `kdp rules --netpol --node N` on a virtual cluster: each node's policy controller keeps its
// compiled table in memory and its last applied text in the data dir; a policy shows up in the
// table of the node that runs the selected pod only, and leaves it when deleted.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import type { KubeObject } from '../../src/client/types.js';
import { dataDirPaths, type DataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { waitFor } from '../helpers/cluster.js';
import { kdp } from '../helpers/cli.js';

const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const NP = { group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies', namespace: 'default' } as const;

describe('kdp rules --netpol (virtual cluster)', () => {
  let paths: DataDirPaths;
  let cluster: RunningCluster;
  const rules = (node: string) => kdp('rules', '--netpol', '--data-dir', paths.root, '--node', node);

  beforeAll(async () => {
    paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-rules-netpol-')));
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'nftables', timeScale: 5,
      dataPlane: 'virtual', dns: false, progress: () => {} });
    await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', labels: { app: 'web' } },
      spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'kdp/echo', ports: [{ name: 'http', containerPort: 8080 }] }] } });
    await waitFor(async () => (await cluster.client.get<Pod>(PODS, 'web')).status?.podIP, 30_000, 'web has an IP');
  }, 60_000);

  afterAll(async () => { await cluster?.close(); }, 30_000);

  it("prints each node's table; a policy appears on the selected pod's node only, and goes when deleted", async () => {
    const before = await rules('n2');
    expect(before.code, before.err).toBe(0);
    expect(before.out).toContain('add table inet kdp-netpol');
    expect(before.out).not.toContain('ingress-default/web');

    await cluster.client.create(NP, { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
      metadata: { name: 'web-http' }, spec: { podSelector: { matchLabels: { app: 'web' } },
        ingress: [{ ports: [{ port: 'http' }] }] } } as KubeObject);
    await waitFor(async () => (await rules('n2')).out.includes('ingress-default/web'), 10_000, 'n2 has web');
    const on = await rules('n2');
    expect(on.out).toContain('th dport 8080 return comment "default/web-http ingress rule 0"');
    expect((await rules('n1')).out).not.toContain('ingress-default/web');
    expect(await cluster.nodeSet.netpolTable('n2')).toBe(on.out);

    await cluster.client.delete(NP, 'web-http');
    await waitFor(async () => !(await rules('n2')).out.includes('ingress-default/web'), 10_000, 'web left n2');
  }, 30_000);

  it('names an unknown node', async () => {
    const r = await rules('n9');
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('node n9 is not one of n1, n2');
  });
});
