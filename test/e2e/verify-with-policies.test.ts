// `kdp verify` checks the Kubernetes network model — every pod reaches every pod with its own
// IP — beneath NetworkPolicy: a cluster whose policies deny traffic is not a broken network.
// The policies themselves are `kdp verify --netpol`'s to check, and verify says so.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';

const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const NETPOLS = { group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies', namespace: 'default' } as const;

describe('kdp verify in a cluster with a deny-all policy (virtual)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdp-verify-np-'));
  let cluster: RunningCluster;
  beforeAll(async () => {
    cluster = await startCluster({ paths: dataDirPaths(dir), nodes: 2, port: 0, proxyMode: 'iptables', timeScale: 20,
      dns: false, progress: () => {} });
    for (const name of ['a', 'b']) {
      await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: name } },
        spec: { containers: [{ name: 'c', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] } } as Pod);
    }
    await waitFor(async () => (await cluster.client.list<Pod>(PODS)).items.every((p) => p.status?.podIP) || undefined,
      30_000, 'pod IPs');
    await cluster.client.create(NETPOLS, { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
      metadata: { name: 'deny-all' }, spec: { podSelector: {}, policyTypes: ['Ingress'] } } as never);
    // The policy has reached both nodes' tables when kdp trace drops a → b for it.
    await waitFor(async () => /DROP \(policy default\/deny-all\)/.test((await kdp('trace', '--data-dir', dir, 'default/a', 'default/b:8080')).out)
      || undefined, 30_000, 'the policy in the nodes\' tables');
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('passes, checking the network beneath the policies, and points at --netpol', async () => {
    const v = await kdp('verify', '--data-dir', dir, '-o', 'json');
    const out = JSON.parse(v.out) as { ok: boolean; checks: Array<{ name: string; failed: number; skipped?: string }> };
    expect(out.checks.filter((c) => c.failed > 0)).toEqual([]);
    expect(v.code).toBe(0);
    const np = out.checks.find((c) => c.name === 'NetworkPolicy');
    expect(np?.skipped).toMatch(/1 NetworkPolic.*kdp verify --netpol/);
  }, 60_000);
});
