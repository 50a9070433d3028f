// `kdp node partition|crash|start` in netns mode: what each failure does to the node's kernel
// objects and processes, and that `start` brings the node back whole.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { podNetnsName } from '../../src/kubelet/runtime-netns.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';
import { probe, seenPod } from '../helpers/netns-probe.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;

function echoPod(name: string, node: string): Pod {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: { nodeName: node, containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] },
  } as Pod;
}

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter']))('node failures in netns mode', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-nf-')));
  const prefix = hostPrefixFor(paths);
  let cluster: RunningCluster;
  const client = () => cluster.client;
  const ready = async (node: string) =>
    (await client().get<Node>(NODES, node)).status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const pod = (name: string) => client().get<Pod>(PODS, name);
  const pidsIn = async (netns: string) =>
    (await exec.run('ip', ['netns', 'pids', netns]).catch(() => ({ stdout: '' }))).stdout.trim().split('\n')
      .filter(Boolean).map(Number);
  const reach = async (ip: string) =>
    seenPod(await probe(exec, `${prefix}-n1`, 'tcp', ip, 8080).catch(() => ''));
  const node = (verb: string, name: string) => kdp('node', verb, '--data-dir', paths.root, name);

  beforeAll(async () => {
    cluster = await startCluster({
      paths, nodes: 2, port: 0, proxyMode: 'nftables', timeScale: 20, dataPlane: 'netns', progress: (l) => { if (process.env.KDP_TEST_LOG) console.log(l); },
    });
    await client().create(PODS, echoPod('far', 'n2'));
    await client().create(PODS, echoPod('near', 'n1'));
    await waitFor(async () => (await pod('far')).status?.podIP && (await pod('near')).status?.podIP,
      30_000, 'pods running');
  }, 60_000);

  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, prefix);
  }, 30_000);

  it('each pod says which namespace holds it (kdp.dev/netns, shown by kubectl describe)', async () => {
    const p = await pod('far');
    expect(p.metadata.annotations?.['kdp.dev/netns']).toBe(podNetnsName(prefix, p.metadata.uid!));
    expect((await pidsIn(p.metadata.annotations!['kdp.dev/netns']!)).length).toBeGreaterThan(0);
  });

  it('a partition cuts the node off and leaves its pods running; start heals it', async () => {
    const uid = (await pod('far')).metadata.uid!;
    const ip = (await pod('far')).status!.podIP!;
    expect(await reach(ip)).toBe('far');
    const before = await pidsIn(podNetnsName(prefix, uid));
    expect(before.length).toBeGreaterThan(0);

    expect((await node('partition', 'n2')).code).toBe(0);
    await waitFor(async () => (await ready('n2')) === 'Unknown', 30_000, 'n2 Unknown after its lease expires');
    expect(await reach(ip)).toBeUndefined();
    expect(await pidsIn(podNetnsName(prefix, uid))).toEqual(before);

    expect((await node('start', 'n2')).code).toBe(0);
    await waitFor(async () => (await ready('n2')) === 'True', 30_000, 'n2 Ready again');
    expect(await reach(ip)).toBe('far');
    expect(await pidsIn(podNetnsName(prefix, uid))).toEqual(before);
  }, 90_000);

  it('a crash kills every pod process and downs the link; start boots the node and its kubelet recreates the pods', async () => {
    const uid = (await pod('far')).metadata.uid!;
    const ip = (await pod('far')).status!.podIP!;
    const before = await pidsIn(podNetnsName(prefix, uid));

    expect((await node('crash', 'n2')).code).toBe(0);
    await waitFor(async () => (await pidsIn(podNetnsName(prefix, uid))).length === 0, 10_000, 'pod processes gone');
    // Out of the namespace is not yet gone: a SIGKILLed process may still be finishing its exit
    // (state D, tearing down its mount namespace) for a moment after `ip netns pids` stops
    // listing it.
    const dead = (pid: number) => { try { process.kill(pid, 0); return false; } catch { return true; } };
    await waitFor(() => before.every(dead), 5_000, 'the pod processes dead');
    expect(await reach(ip)).toBeUndefined();
    await waitFor(async () => (await ready('n2')) === 'Unknown', 30_000, 'n2 Unknown');

    expect((await node('start', 'n2')).code).toBe(0);
    await waitFor(async () => (await ready('n2')) === 'True', 30_000, 'n2 Ready after boot');
    const back = await waitFor(async () => {
      const p = await pod('far');
      const ip2 = p.status?.podIP;
      return ip2 && (await reach(ip2)) === 'far' ? ip2 : undefined;
    }, 30_000, 'pod far answering again');
    expect(back).toBeTruthy();
    const after = await pidsIn(podNetnsName(prefix, uid));
    expect(after.length).toBeGreaterThan(0);
    expect(after.some((p) => before.includes(p))).toBe(false);
    // The booted node's routes to the other nodes' pod CIDRs are made anew.
    const near = (await pod('near')).status!.podIP!;
    const fromFar = await probe(exec, podNetnsName(prefix, uid), 'tcp', near, 8080).catch(() => '');
    expect(seenPod(fromFar)).toBe('near');
  }, 90_000);

  it('failing a node that is not one of the cluster\'s is a clear error', async () => {
    const r = await node('crash', 'n9');
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('node n9 is not one of n1, n2');
  });
});
