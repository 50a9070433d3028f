// LoadBalancer Services on a netns cluster, reached from outside: a client namespace this test
// makes on the underlay bridge (172.18.254.10, not a node) connects to the EXTERNAL-IP that
// `kubectl get svc` shows; one elected node answers ARP for it (lb-speaker.ts) and its kube-proxy
// rules DNAT to every endpoint. externalTrafficPolicy Local keeps the client's address; deleting
// the Service withdraws the address.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { kubectlFor } from '../apiserver/helpers/kubectl.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';
import { probe, seenPod, seenSource } from '../helpers/netns-probe.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const CLIENT_IP = '172.18.254.10';

for (const mode of ['iptables', 'nftables'] as const) describe.runIf(canUseNetns(['ip', 'iptables-restore', 'nft', 'nsenter']))(`LoadBalancer Services from outside (netns, ${mode})`, () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-lbn-')));
  const prefix = hostPrefixFor(paths);
  const clientNs = `${prefix}-lbout`;
  let cluster: RunningCluster | undefined;
  const kubectl = kubectlFor(paths.kubeconfig, { minor: 33 });
  const k = async (...args: string[]) => {
    const r = await kubectl(args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.err}`);
    return r.out;
  };
  let lbIP = '';
  let pods: string[] = [];
  let podIPs: string[] = [];
  const podNode = new Map<string, string>(); // pod IP → node
  /** Nodes whose uplink holds the LoadBalancer address. */
  const holders = async () => {
    const out: string[] = [];
    for (const n of cluster!.nodes) {
      const text = (await exec.run('ip', ['-n', `${prefix}-${n.name}`, '-o', 'addr', 'show', 'dev', 'eth0'])).stdout;
      if (text.includes(` ${lbIP}/32 `)) out.push(n.name);
    }
    return out;
  };
  const ask = () => probe(exec, clientNs, 'tcp', lbIP, 80).catch(() => '');

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: mode, timeScale: 5,
      dataPlane: 'netns', progress: () => {}, cloud: { lbCIDR: '172.18.255.200/29' } });
    // The outside client: its own namespace, a veth made inside the underlay onto its bridge.
    const underlay = `${prefix}-underlay`;
    await exec.run('ip', ['netns', 'add', clientNs]);
    await exec.run('ip', ['-n', underlay, 'link', 'add', 'lbout0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', clientNs]);
    await exec.run('ip', ['-n', underlay, 'link', 'set', 'lbout0', 'master', 'br0', 'up']);
    await exec.run('ip', ['-n', clientNs, 'addr', 'add', `${CLIENT_IP}/16`, 'dev', 'eth0']);
    await exec.run('ip', ['-n', clientNs, 'link', 'set', 'eth0', 'up']);
    await exec.run('ip', ['-n', clientNs, 'link', 'set', 'lo', 'up']);
    await k('create', 'deployment', 'web', '--image=kdp/echo', '--replicas=4', '--port=8080');
    pods = await waitFor(async () => {
      const ready = (await cluster!.client.list<Pod>(PODS, { labelSelector: 'app=web' })).items
        .filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      if (ready.length !== 4) return undefined;
      podIPs = ready.map((p) => p.status!.podIP!);
      for (const p of ready) podNode.set(p.status!.podIP!, p.spec!.nodeName!);
      return ready.map((p) => p.metadata.name!).sort();
    }, 60_000, '4 web pods ready');
  }, 120_000);

  afterAll(async () => {
    await exec.run('ip', ['netns', 'del', clientNs]).catch(() => undefined);
    await cluster?.close();
    cluster = undefined;
    await cleanupHost(exec, paths.hostState, prefix);
  }, 60_000);

  it('kubectl expose --type=LoadBalancer: kubectl get svc shows an EXTERNAL-IP from the pool', async () => {
    await k('expose', 'deployment', 'web', '--type=LoadBalancer', '--port', '80', '--target-port', '8080');
    lbIP = await waitFor(async () => {
      const ip = (await k('get', 'svc', 'web', '--no-headers')).trim().split(/\s+/)[3];
      return ip && ip !== '<pending>' ? ip : undefined;
    }, 20_000, 'EXTERNAL-IP');
    expect(lbIP).toBe('172.18.255.200');
  });

  it('from the outside namespace, connections to EXTERNAL-IP:80 reach every endpoint', async () => {
    const seen = new Set<string>();
    await waitFor(async () => { const a = await ask(); if (seenPod(a)) seen.add(seenPod(a)!); return seen.size > 0; },
      20_000, 'first answer');
    // Forty connections at most, four at a time (each is a process start; they do not interact).
    for (let i = 0; i < 10 && seen.size < pods.length; i++) {
      for (const a of await Promise.all([ask(), ask(), ask(), ask()])) if (seenPod(a)) seen.add(seenPod(a)!);
    }
    expect([...seen].sort()).toEqual(pods);
  }, 90_000);

  it('kdp trace from an outside address to EXTERNAL-IP:80 shows the DNAT to the endpoints', async () => {
    // The packet enters at the node that answers ARP for the address.
    const owner = (await holders())[0];
    const r = await kdp('trace', '--data-dir', paths.root, CLIENT_IP, `${lbIP}:80`);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`outside client ${CLIENT_IP} → ${lbIP} (LoadBalancer default/web, announced by ${owner})`);
    expect(r.out).toContain(`1. ${owner} ingress: arrives on ${owner} eth0`);
    if (mode === 'iptables') expect(r.out).toContain('"default/web loadbalancer IP"');
    const j = await kdp('trace', '--data-dir', paths.root, '-o', 'json', CLIENT_IP, `${lbIP}:80`);
    const dests = (JSON.parse(j.out) as { destinations: Array<{ destination: string; verdict: string }> }).destinations;
    expect(dests.map((d) => d.destination).sort()).toEqual(podIPs.map((ip) => `${ip}:8080`).sort());
    expect(dests.every((d) => d.verdict === 'ACCEPT')).toBe(true);
    for (const ip of podIPs) expect(r.out).toContain(`DNAT ${lbIP}:80 → ${ip}:8080`);
  });

  it('exactly one node holds the address on its uplink', async () => {
    expect(await holders()).toHaveLength(1);
  });

  it('externalTrafficPolicy Local: the endpoint sees the outside client\'s own address', async () => {
    await k('patch', 'svc', 'web', '-p', '{"spec":{"externalTrafficPolicy":"Local"}}');
    const sources = new Set<string>();
    await waitFor(async () => seenSource(await ask()) === CLIENT_IP, 20_000, 'client IP preserved');
    for (const a of await Promise.all(Array.from({ length: 8 }, ask))) {
      const src = seenSource(a);
      if (src) sources.add(src);
    }
    expect([...sources]).toEqual([CLIENT_IP]);
    // kdp trace agrees: entering at the owner, only its local endpoints, the client IP kept.
    const owner = (await holders())[0]!;
    const j = await kdp('trace', '--data-dir', paths.root, '-o', 'json', CLIENT_IP, `${lbIP}:80`);
    const dests = (JSON.parse(j.out) as { destinations: Array<{ destination: string; sourceSeen: string }> }).destinations;
    expect(dests.map((d) => d.destination).sort())
      .toEqual(podIPs.filter((ip) => podNode.get(ip) === owner).map((ip) => `${ip}:8080`).sort());
    expect(dests.every((d) => d.sourceSeen === CLIENT_IP)).toBe(true);
  }, 60_000);

  it('deleting the Service withdraws the address: nothing answers, no node holds it', async () => {
    await k('delete', 'svc', 'web', '--wait=true', '--timeout=20s');
    await waitFor(async () => {
      for (const n of cluster!.nodes) {
        const out = (await exec.run('ip', ['-n', `${prefix}-${n.name}`, '-o', 'addr', 'show', 'dev', 'eth0'])).stdout;
        if (out.includes(` ${lbIP}/32 `)) return undefined;
      }
      return true;
    }, 20_000, 'address withdrawn');
    expect(seenPod(await ask())).toBeUndefined();
  }, 60_000);
});
