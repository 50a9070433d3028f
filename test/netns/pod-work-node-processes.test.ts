// Issue 13's "Must show" with the node agents as separate `kdp node` processes (netns mode): a
// `kdp up` runs the control plane and its tainted control-plane node n1; n2 and n3 are `kdp node`
// processes that join its underlay (their own namespaces, pod processes and kernel rules, their
// kubelet API on InternalIP:10250 where the API server dials it). The shared scenario
// (test/helpers/pod-work-scenario.ts) then runs against pods on n2 and n3. Whatever happens, the
// node processes are killed and every namespace of the cluster is removed afterwards.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/api/types.js';
import { hostPrefixFor, joinedNodeStateFile } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { listNetns } from '../../src/host/netns.js';
import { podNetnsName } from '../../src/kubelet/runtime-netns.js';
import { waitFor } from '../helpers/cluster.js';
import { podWorkScenario } from '../helpers/pod-work-scenario.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const KDP = fileURLToPath(new URL('../../bin/kdp.js', import.meta.url));
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const WORKERS = ['n2', 'n3'] as const;

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter', 'unshare']))('working in pods, nodes as kdp node processes (netns)', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-pw-nodes-')));
  const prefix = hostPrefixFor(paths);
  let cluster: RunningCluster;
  const nodes = new Map<string, { proc: ChildProcess; log: string[] }>();
  const exited = (p: ChildProcess) => p.exitCode !== null || p.signalCode !== null;
  /** SIGTERM, then SIGKILL after `graceMs`: resolves once the process is gone. */
  const stopNode = async (name: string, graceMs = 20_000) => {
    const n = nodes.get(name);
    if (!n || exited(n.proc)) return;
    const gone = new Promise((r) => n.proc.once('exit', r));
    n.proc.kill('SIGTERM');
    const t = setTimeout(() => n.proc.kill('SIGKILL'), graceMs);
    await gone;
    clearTimeout(t);
  };
  const ready = async (name: string) => (await cluster.client.get<Node>(NODES, name)).status?.conditions
    ?.find((c) => c.type === 'Ready')?.status === 'True';

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'nftables', timeScale: 10, dataPlane: 'netns',
      controlPlaneTaint: true, progress: () => {} });
    for (const name of WORKERS) {
      const proc = spawn(process.execPath, [KDP, 'node', '--name', name, '--mode', 'nftables', '--time-scale', '10',
        '--data-dir', paths.root], { stdio: ['ignore', 'ignore', 'pipe'] });
      const log: string[] = [];
      proc.stderr!.on('data', (d: Buffer) => { log.push(String(d)); });
      nodes.set(name, { proc, log });
    }
    try {
      for (const name of WORKERS) await waitFor(() => ready(name), 90_000, `node ${name} Ready`);
    } catch (e) {
      for (const [name, n] of nodes) console.error(`kdp node ${name}:\n${n.log.join('')}`);
      throw e;
    }
  }, 180_000);
  afterAll(async () => {
    for (const name of WORKERS) await stopNode(name, 10_000);
    for (const name of WORKERS) await cleanupHost(exec, joinedNodeStateFile(paths, name), `${prefix}-${name}`);
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, prefix);
  }, 90_000);

  it('the joined nodes are netns nodes of the cluster: their own namespaces, underlay addresses, kubelet on :10250',
    async () => {
      const present = await listNetns(exec);
      const ips: string[] = [];
      for (const name of WORKERS) {
        expect(present).toContain(`${prefix}-${name}`);
        const node = await cluster.client.get<Node>(NODES, name);
        ips.push(node.status!.addresses!.find((a) => a.type === 'InternalIP')!.address);
        expect(node.status?.daemonEndpoints?.kubeletEndpoint?.Port).toBe(10250);
      }
      // Started at the same moment, they still took different addresses, after n1's.
      expect(ips.sort()).toEqual(['172.18.0.3', '172.18.0.4']);
      expect(cluster.nodeSet.stateOf('n2')).toBeUndefined();
    }, 30_000);

  podWorkScenario(() => ({ kubeconfig: paths.kubeconfig, client: cluster.client, workers: WORKERS }));

  it('a kdp node process ends on SIGTERM with its pods\' processes and namespaces; the cluster runs on', async () => {
    const pods = (await cluster.client.list<Pod>(PODS)).items.filter((p) => p.spec?.nodeName === 'n3'
      && p.status?.phase === 'Running');
    expect(pods.length).toBeGreaterThan(0);
    await stopNode('n3');
    expect(nodes.get('n3')!.proc.exitCode).toBe(0);
    const present = await listNetns(exec);
    expect(present).not.toContain(`${prefix}-n3`);
    for (const p of pods) expect(present).not.toContain(podNetnsName(prefix, p.metadata.uid!));
    expect(present).toContain(`${prefix}-n2`);
    expect(await ready('n2')).toBe(true);
  }, 60_000);
});
