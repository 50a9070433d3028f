// kdp up shows its control plane as kubeadm's static pods on the control-plane node: mirror pods
// kube-apiserver-n1, kube-controller-manager-n1 and kube-scheduler-n1 Running in kube-system with
// the process's PID, re-created when deleted; the node carries the control-plane role label; the
// kubelet never tries to run a mirror pod.

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { waitFor } from '../helpers/cluster.js';

const run = promisify(execFile);
const KUBECTL = '/usr/lib/google-cloud-sdk/bin/kubectl.1.32';
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'kube-system' };

describe('control-plane mirror pods', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-cp-pods-')));
  let cluster: RunningCluster;
  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'iptables', timeScale: 20,
      dataPlane: 'virtual', dns: false, progress: () => undefined });
  }, 60_000);
  afterAll(async () => { await cluster?.close(); });

  it('three Running mirror pods on n1, owned by the Node, with this process\'s PID', async () => {
    const pods = (await cluster.client.list<any>(PODS, { labelSelector: 'tier=control-plane' })).items;
    expect(pods.map((p: any) => p.metadata.name).sort())
      .toEqual(['kube-apiserver-n1', 'kube-controller-manager-n1', 'kube-scheduler-n1']);
    for (const p of pods) {
      expect(p.spec).toMatchObject({ nodeName: 'n1', hostNetwork: true, priorityClassName: 'system-node-critical' });
      expect(p.metadata.annotations['kubernetes.io/config.mirror']).toMatch(/^[0-9a-f]{32}$/);
      expect(p.metadata.annotations['kubernetes.io/config.source']).toBe('file');
      expect(p.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Node', name: 'n1', controller: true })]);
      expect(p.spec.serviceAccountName).toBeUndefined();
      expect(p.status.phase).toBe('Running');
      expect(p.status.podIP).toBe('172.18.0.2');
      expect(p.status.containerStatuses[0]).toMatchObject({ ready: true, containerID: `kdp://${process.pid}` });
    }
    const api = pods.find((p: any) => p.metadata.name === 'kube-apiserver-n1');
    expect(api.spec.containers[0].command).toContain(`--secure-port=${new URL(cluster.url).port}`);
  });

  it('n1 has the control-plane role; kubectl shows both', async () => {
    const n1 = await cluster.client.get<any>({ group: '', version: 'v1', resource: 'nodes' }, 'n1');
    expect(n1.metadata.labels['node-role.kubernetes.io/control-plane']).toBe('');
    expect(n1.spec.taints ?? []).toEqual([]);
    if (!existsSync(KUBECTL)) return;
    const nodes = (await run(KUBECTL, ['--kubeconfig', paths.kubeconfig, 'get', 'nodes'])).stdout;
    expect(nodes).toMatch(/\nn1\s+Ready\s+control-plane\s/);
    const pods = (await run(KUBECTL, ['--kubeconfig', paths.kubeconfig, 'get', 'pods', '-n', 'kube-system'])).stdout;
    expect(pods).toMatch(/\nkube-scheduler-n1\s+1\/1\s+Running\s+0\s/);
  });

  it('a deleted mirror pod comes back (a new uid), as the kubelet re-creates it', async () => {
    const old = await cluster.client.get<any>(PODS, 'kube-scheduler-n1');
    await cluster.client.delete(PODS, 'kube-scheduler-n1');
    const back = await waitFor(async () => {
      const p = await cluster.client.get<any>(PODS, 'kube-scheduler-n1').catch(() => undefined);
      return p && p.metadata.uid !== old.metadata.uid && p.status?.phase === 'Running' ? p : undefined;
    }, 20_000, 'kube-scheduler-n1 re-created');
    expect(back.status.containerStatuses[0].ready).toBe(true);
  });
});
