import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node, Pod, Service } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { resolveClusterNetwork } from '../../src/cluster/network.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { podNetnsName } from '../../src/kubelet/runtime-netns.js';
import { waitFor } from '../helpers/cluster.js';
import { probe, seenPod, seenSource } from '../helpers/netns-probe.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' } as const;
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;

function webPod(name: string, node: string): Pod {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: 'web' } },
    spec: { nodeName: node, containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] },
  } as Pod;
}

/** A 2-node netns cluster for the enclosing describe block: started before its tests, removed
 *  with every kernel object after them. */
function netnsCluster(ipFamily: 'dual' | 'ipv6', mode: 'nftables' | 'iptables', tag: string) {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), `kdp-${tag}-`)));
  const prefix = hostPrefixFor(paths);
  let cluster: RunningCluster | undefined;
  beforeAll(async () => {
    cluster = await startCluster({
      paths, nodes: 2, port: 0, proxyMode: mode, timeScale: 5, dataPlane: 'netns',
      progress: () => {}, network: resolveClusterNetwork({ ipFamily }),
    });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    cluster = undefined;
    await cleanupHost(exec, paths.hostState, prefix);
  }, 30_000);
  return { prefix, client: () => cluster!.client };
}

/** web-1 on n1, web-2 on n2 and Service `web` over them; the pods once Ready with `ipCount` IPs. */
async function deployWeb(client: RunningCluster['client'], spec: Partial<Service['spec']>,
  ipCount: number): Promise<Pod[]> {
  await client.create(PODS, webPod('web-1', 'n1'));
  await client.create(PODS, webPod('web-2', 'n2'));
  await client.create(SVC, {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' },
    spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }], ...spec },
  });
  return waitFor(async () => {
    const ps = (await client.list<Pod>(PODS)).items;
    return ps.length === 2 && ps.every((p) => p.status?.podIPs?.length === ipCount &&
      p.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True') ? ps : undefined;
  }, 45_000, `two pods Ready with ${ipCount} IP(s)`);
}

const v6Of = (p: Pod) => p.status!.podIPs!.map((x) => x.ip).find((ip) => ip.includes(':'))!;

const MODES = ['nftables', 'iptables'] as const;

describe.runIf(canUseNetns(['ip', 'iptables-restore', 'ip6tables-restore', 'nft', 'nsenter'])).each(MODES)(
  'kdp up --ip-family dual in netns mode (%s)', (mode) => {
    const { prefix, client } = netnsCluster('dual', mode, 'dsn');
    let pods: Pod[] = [];

    beforeAll(async () => {
      pods = await deployWeb(client(), { ipFamilyPolicy: 'RequireDualStack' }, 2);
    }, 60_000);

    it('nodes hold an IPv6 underlay address, IPv6 host-gw routes, forwarding and masquerade', async () => {
      const nodes = (await client().list<Node>(NODES)).items;
      const n2 = nodes.find((n) => n.metadata.name === 'n2')!;
      expect(n2.status?.addresses?.filter((a) => a.type === 'InternalIP').map((a) => a.address))
        .toEqual(['172.18.0.3', 'fc00:f853:ccd:e793::3']);
      const ns = `${prefix}-n1`;
      const addrs = (await exec.run('ip', ['-n', ns, '-6', 'addr', 'show', 'dev', 'eth0'])).stdout;
      expect(addrs).toContain('fc00:f853:ccd:e793::2/64');
      const routes = await waitFor(async () => {
        const r = (await exec.run('ip', ['-n', ns, '-6', 'route', 'show'])).stdout;
        return r.includes('fd00:10:244:1::/64 via fc00:f853:ccd:e793::3') ? r : undefined;
      }, 20_000, 'the IPv6 route to n2\'s pods');
      expect(routes).not.toMatch(/fd00:10:244::\/64 via/);
      const fwd = (await exec.run('sysctl', ['-n', 'net.ipv6.conf.all.forwarding'], { netns: ns })).stdout;
      expect(fwd.trim()).toBe('1');
      const nat6 = (await exec.run('ip6tables-save', ['-t', 'nat'], { netns: ns })).stdout;
      expect(nat6).toMatch(/-A KDP-MASQ -d fd00:10:244::\/56 .*-j RETURN\n-A KDP-MASQ -j MASQUERADE/);
    });

    it('a pod reaches a pod on the other node over IPv6 with its own IPv6 source (no NAT)', async () => {
      const [a, b] = ['web-1', 'web-2'].map((n) => pods.find((p) => p.metadata.name === n)!);
      const answer = await waitFor(async () =>
        (await probe(exec, podNetnsName(prefix, a!.metadata.uid!), 'tcp', v6Of(b!), 8080).catch(() => ''))
        || undefined, 20_000, 'web-2 to answer over IPv6');
      expect(seenPod(answer)).toBe('web-2');
      expect(seenSource(answer)).toBe(v6Of(a!));
    });

    it('a pod reaches the IPv6 ClusterIP of a dual-stack Service through the IPv6 kernel rules', async () => {
      const svc = await client().get<Service>(SVC, 'web');
      const ip6 = svc.spec!.clusterIPs!.find((ip) => ip.includes(':'))!;
      const a = pods.find((p) => p.metadata.name === 'web-1')!;
      const table = mode === 'nftables'
        ? (await exec.run('nft', ['list', 'table', 'ip6', 'kube-proxy'], { netns: `${prefix}-n1` })).stdout
        : (await exec.run('ip6tables-save', ['-t', 'nat'], { netns: `${prefix}-n1` })).stdout;
      expect(table).toContain(ip6);
      const seen = new Set<string>();
      await waitFor(async () => {
        const ans = await probe(exec, podNetnsName(prefix, a.metadata.uid!), 'tcp', ip6, 80).catch(() => '');
        const who = seenPod(ans);
        if (who) seen.add(who);
        return seen.size === 2 || undefined;
      }, 30_000, 'both pods behind the IPv6 ClusterIP');
      expect([...seen].sort()).toEqual(['web-1', 'web-2']);
    });
  });

describe.runIf(canUseNetns(['ip', 'ip6tables-restore', 'nft', 'nsenter']))(
  'kdp up --ip-family ipv6 in netns mode (nftables)', () => {
    const { prefix, client } = netnsCluster('ipv6', 'nftables', 'v6n');

    it('IPv6-only pods reach each other NAT-free and through an IPv6 ClusterIP', async () => {
      const pods = await deployWeb(client(), {}, 1);
      const [a, b] = ['web-1', 'web-2'].map((n) => pods.find((p) => p.metadata.name === n)!);
      expect(a!.status!.podIPs!.map((x) => x.ip.includes(':'))).toEqual([true]);
      const answer = await waitFor(async () =>
        (await probe(exec, podNetnsName(prefix, a!.metadata.uid!), 'tcp', b!.status!.podIP!, 8080)
          .catch(() => '')) || undefined, 20_000, 'web-2 to answer');
      expect(seenSource(answer)).toBe(a!.status!.podIP);
      const svc = await client().get<Service>(SVC, 'web');
      expect(svc.spec?.clusterIP).toMatch(/^fd00:10:96::/);
      const seen = await waitFor(async () => seenPod(await probe(exec, podNetnsName(prefix, a!.metadata.uid!),
        'tcp', svc.spec!.clusterIP!, 80).catch(() => '')), 30_000, 'the IPv6 ClusterIP to answer');
      expect(['web-1', 'web-2']).toContain(seen);
    }, 90_000);
  });
