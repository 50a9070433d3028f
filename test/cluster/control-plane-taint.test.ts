// `kdp up --control-plane-taint`: n1 carries kubeadm's node-role.kubernetes.io/control-plane
// NoSchedule taint as kind's control-plane node does when a cluster has workers: user pods land
// on the other nodes, while the DNS pods (which tolerate it, as kubeadm's do) and daemons may run
// there. Without the flag n1 is schedulable (a two-node lab uses both nodes).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/api/types.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster } from '../../src/cluster/up.js';
import { waitFor } from '../helpers/cluster.js';

const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;

describe.each([true, false])('kdp up with controlPlaneTaint %s (virtual)', (taint) => {
  it(taint ? 'taints n1; user pods avoid it' : 'leaves n1 schedulable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-cp-taint-'));
    const cluster = await startCluster({ paths: dataDirPaths(dir), nodes: 2, port: 0, proxyMode: 'iptables', timeScale: 20,
      dns: false, controlPlaneTaint: taint, progress: () => {} });
    try {
      const n1 = await cluster.client.get<Node>(NODES, 'n1');
      const taints = (n1.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`);
      expect(taints.includes('node-role.kubernetes.io/control-plane:NoSchedule')).toBe(taint);
      expect(n1.metadata.labels?.['node-role.kubernetes.io/control-plane']).toBe('');
      for (let i = 0; i < 6; i++) {
        await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}` },
          spec: { containers: [{ name: 'c', image: 'kdp/echo' }] } } as Pod);
      }
      const nodes = await waitFor(async () => {
        const pods = (await cluster.client.list<Pod>(PODS)).items;
        return pods.every((p) => p.spec?.nodeName) ? pods.map((p) => p.spec!.nodeName!) : undefined;
      }, 30_000, 'the pods scheduled');
      if (taint) expect(new Set(nodes)).toEqual(new Set(['n2']));
      else expect(new Set(nodes)).toEqual(new Set(['n1', 'n2']));
    } finally {
      await cluster.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
