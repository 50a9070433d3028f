import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointSlice, Node, Pod, Service, ServiceCIDR } from '../../src/api/types.js';
import { dataDirPaths, type DataDirPaths } from '../../src/cluster/data-dir.js';
import { resolveClusterNetwork } from '../../src/cluster/network.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { kdp } from '../helpers/cli.js';
import { listItems, ref, waitFor } from '../helpers/cluster.js';

const DEPLOY = ref('deployments', 'default', 'apps');
const isV6 = (ip: string) => ip.includes(':');

/** A two-node virtual cluster of one IP family choice, running a `web` Deployment and Service. */
async function startWeb(
  paths: DataDirPaths, ipFamily: 'dual' | 'ipv6', proxyMode: 'iptables' | 'nftables',
  replicas: number, svcSpec: Record<string, unknown> = {},
): Promise<RunningCluster> {
  const cluster = await startCluster({
    paths, nodes: 2, port: 0, proxyMode, timeScale: 20, progress: () => {},
    network: resolveClusterNetwork({ ipFamily }),
  });
  await cluster.client.create(DEPLOY, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas, selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] } },
    },
  });
  await cluster.client.create(ref('services', 'default'), {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' },
    spec: { selector: { app: 'web' }, ...svcSpec,
      ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
  });
  return cluster;
}

describe('kdp up --ip-family dual (virtual mode)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-ds-'));
  const paths = dataDirPaths(dataDir);
  let cluster: RunningCluster;

  beforeAll(async () => {
    cluster = await startWeb(paths, 'dual', 'iptables', 4, { ipFamilyPolicy: 'RequireDualStack' });
  });
  afterAll(async () => {
    await cluster?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('nodes get a podCIDR of each family in cluster-CIDR order and InternalIPs of both', async () => {
    const nodes = await waitFor(async () => {
      const ns = await listItems<Node>(cluster.client, ref('nodes'));
      return ns.every((n) => n.spec?.podCIDRs?.length === 2) ? ns : undefined;
    });
    const byName: Record<string, Node> = Object.fromEntries(nodes.map((n) => [n.metadata.name, n]));
    expect(byName.n1!.spec).toMatchObject({ podCIDR: '10.244.0.0/24',
      podCIDRs: ['10.244.0.0/24', 'fd00:10:244::/64'] });
    expect(byName.n2!.spec?.podCIDRs).toEqual(['10.244.1.0/24', 'fd00:10:244:1::/64']);
    expect(byName.n1!.status?.addresses?.filter((a) => a.type === 'InternalIP').map((a) => a.address))
      .toEqual(['172.18.0.2', 'fc00:f853:ccd:e793::2']);
  });

  it('the default ServiceCIDR holds both ranges', async () => {
    const cidr = await cluster.client.get<ServiceCIDR>(
      ref('servicecidrs', undefined, 'networking.k8s.io'), 'kubernetes');
    expect(cidr.spec?.cidrs).toEqual(['10.96.0.0/12', 'fd00:10:96::/112']);
  });

  it('pods report an IP of each family, primary first, inside their node\'s podCIDRs', async () => {
    const pods = await waitFor(async () => {
      const ps = await listItems<Pod>(cluster.client, ref('pods', 'default'));
      return ps.length === 4 && ps.every((p) => p.status?.podIPs?.length === 2) ? ps : undefined;
    }, 30_000, 'four dual-stack pods');
    for (const p of pods) {
      const ips = p.status!.podIPs!.map((x) => x.ip);
      expect(ips.map(isV6)).toEqual([false, true]);
      expect(p.status!.podIP).toBe(ips[0]);
      const slot = p.spec!.nodeName === 'n1' ? '0' : '1';
      expect(ips[0]!.startsWith(`10.244.${slot}.`)).toBe(true);
      expect(ips[1]!.startsWith(slot === '0' ? 'fd00:10:244::' : 'fd00:10:244:1::')).toBe(true);
      const host = String(Number(slot) + 2);
      expect(p.status!.hostIPs?.map((h) => h.ip)).toEqual([`172.18.0.${host}`, `fc00:f853:ccd:e793::${host}`]);
    }
  });

  it('a RequireDualStack Service gets two ClusterIPs and one EndpointSlice per family', async () => {
    const svc = await cluster.client.get<Service>(ref('services', 'default'), 'web');
    expect(svc.spec?.ipFamilies).toEqual(['IPv4', 'IPv6']);
    expect(svc.spec?.clusterIPs?.map(isV6)).toEqual([false, true]);
    const slices = await waitFor(async () => {
      const all = await listItems<EndpointSlice>(cluster.client,
        ref('endpointslices', 'default', 'discovery.k8s.io'));
      const mine = all.filter((s) => s.metadata.labels?.['kubernetes.io/service-name'] === 'web');
      const ready = mine.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready);
      return ready.length === 8 ? mine : undefined;
    }, 30_000, 'eight ready endpoints');
    expect(slices.map((s) => s.addressType).sort()).toEqual(['IPv4', 'IPv6']);
    for (const s of slices) {
      for (const e of s.endpoints ?? []) expect(isV6(e.addresses[0]!)).toBe(s.addressType === 'IPv6');
    }
  });

  it('kdp rules shows the Service in both families\' tables', async () => {
    const svc = await cluster.client.get<Service>(ref('services', 'default'), 'web');
    const [v4, v6] = svc.spec!.clusterIPs!;
    // A Service without ready endpoints is in the tables too (a REJECT): wait for the DNATs.
    await waitFor(async () => {
      const r4 = (await kdp('rules', '--data-dir', dataDir, '--node', 'n2')).out;
      const r6 = (await kdp('rules', '--data-dir', dataDir, '--node', 'n2', '--family', 'IPv6')).out;
      return r4.includes(`-d ${v4} `) && r6.includes(`-d ${v6} `) && r6.includes('-j DNAT');
    }, 30_000, 'both families programmed');
    const r6 = (await kdp('rules', '--data-dir', dataDir, '--node', 'n2', '--family', 'IPv6')).out;
    expect(r6).toMatch(/-A KUBE-SEP-\w+ .*-j DNAT --to-destination \[fd00:10:244:/);
  });

  it('kdp trace follows an IPv6 ClusterIP to the four IPv6 pods, and IPv6 pod to pod is NAT-free', async () => {
    const svc = await cluster.client.get<Service>(ref('services', 'default'), 'web');
    const v6 = svc.spec!.clusterIPs![1]!;
    const pods = await listItems<Pod>(cluster.client, ref('pods', 'default'));
    const want = pods.map((p) => p.status!.podIPs![1]!.ip).sort();
    const trace = async () => {
      const r = await kdp('trace', '--data-dir', dataDir, '-o', 'json', 'n1', `[${v6}]:80`);
      expect(r.code).toBe(0);
      return JSON.parse(r.out).destinations.map((d: { destination: string }) =>
        d.destination.replace(/^\[(.*)\]:\d+$/, '$1')).sort() as string[];
    };
    // Pods become ready endpoints a sync after they have IPs.
    await waitFor(async () => JSON.stringify(await trace()) === JSON.stringify(want) || undefined,
      30_000, 'n1 tracing the IPv6 ClusterIP to every pod');
    expect(await trace()).toEqual(want);
    const a = pods.find((p) => p.spec!.nodeName === 'n1')!;
    const b = pods.find((p) => p.spec!.nodeName === 'n2')!;
    const t = await kdp('trace', '--data-dir', dataDir, a.status!.podIPs![1]!.ip,
      `[${b.status!.podIPs![1]!.ip}]:8080`);
    expect(t.out).toContain('NAT-free: yes');
  });

  it('kdp verify passes with both families', async () => {
    const v = await kdp('verify', '--data-dir', dataDir, '-o', 'json');
    const report = JSON.parse(v.out);
    expect(report.checks.map((c: { name: string; failed: number }) => [c.name, c.failed]))
      .toEqual(report.checks.map((c: { name: string }) => [c.name, 0]));
    expect(v.code).toBe(0);
  });
});

describe('kdp up --ip-family ipv6 (virtual mode, nftables)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-v6-'));
  const paths = dataDirPaths(dataDir);
  let cluster: RunningCluster;

  beforeAll(async () => {
    cluster = await startWeb(paths, 'ipv6', 'nftables', 2);
  });
  afterAll(async () => {
    await cluster?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('nodes, pods and Services are IPv6 only, from the IPv6 defaults', async () => {
    const nodes = await waitFor(async () => {
      const ns = await listItems<Node>(cluster.client, ref('nodes'));
      return ns.every((n) => n.spec?.podCIDR) ? ns : undefined;
    });
    expect(nodes.map((n) => n.spec?.podCIDRs).sort()).toEqual([['fd00:10:244:1::/64'], ['fd00:10:244::/64']]);
    expect(nodes.flatMap((n) => n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP')
      .every((a) => isV6(a.address))).toBe(true);
    const api = await cluster.client.get<Service>(ref('services', 'default'), 'kubernetes');
    expect(api.spec?.clusterIP).toBe('fd00:10:96::1');
    const pods = await waitFor(async () => {
      const ps = await listItems<Pod>(cluster.client, ref('pods', 'default'));
      return ps.length === 2 && ps.every((p) => p.status?.podIP) ? ps : undefined;
    }, 30_000, 'two pods with IPs');
    for (const p of pods) expect(p.status!.podIPs!.map((x) => isV6(x.ip))).toEqual([true]);
  });

  it('kdp rules shows the ip6 kube-proxy table and kdp trace/verify work over it', async () => {
    const svc = await cluster.client.get<Service>(ref('services', 'default'), 'web');
    expect(svc.spec?.ipFamilies).toEqual(['IPv6']);
    const ip = svc.spec!.clusterIP!;
    const rules = await waitFor(async () => {
      const r = (await kdp('rules', '--data-dir', dataDir, '--node', 'n1')).out;
      return r.includes('table ip6 kube-proxy') && r.includes(ip) && r.includes('endpoint-') ? r : undefined;
    }, 30_000, 'the Service in the ip6 table');
    expect(rules).not.toContain('table ip kube-proxy');
    const pods = await waitFor(async () => {
      const ps = await listItems<Pod>(cluster.client, ref('pods', 'default'));
      return ps.every((p) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True')
        ? ps : undefined;
    }, 30_000, 'ready pods');
    // Ready pods reach every node's rules a sync later: wait for n2 to hold both endpoints.
    const want = pods.map((p) => `[${p.status!.podIP}]:8080`).sort();
    const dests = async () => {
      const t = JSON.parse((await kdp('trace', '--data-dir', dataDir, '-o', 'json', 'n2', `[${ip}]:80`)).out);
      return t.destinations.map((d: { destination: string }) => d.destination).sort() as string[];
    };
    await waitFor(async () => JSON.stringify(await dests()) === JSON.stringify(want) || undefined,
      30_000, 'n2 tracing the ClusterIP to both pods');
    expect(await dests()).toEqual(want);
    const v = await kdp('verify', '--data-dir', dataDir);
    expect(v.code).toBe(0);
  });
});
