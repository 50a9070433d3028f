// `kdp dns lookup` and `kdp trace POD NAME` on a virtual cluster: the same DNS server the
// coredns pods run, started on loopback over the cluster's records; short names through a
// pod's search list (ndots:5).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';

const SERVICES = { group: '', version: 'v1', resource: 'services', namespace: 'default' };
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' };

describe('kdp dns lookup (virtual mode)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-dns-lookup-'));
  const paths = dataDirPaths(dataDir);
  let cluster: RunningCluster | undefined;
  const look = (...a: string[]) => kdp('dns', 'lookup', '--data-dir', dataDir, ...a);

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'iptables', timeScale: 20,
      dataPlane: 'virtual', progress: () => undefined });
    await cluster.client.create(SERVICES, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
    await waitFor(async () => {
      const s = await cluster!.client.get<any>(SERVICES, 'web');
      return s.spec.clusterIP ? s : undefined;
    }, 10_000, 'web has a ClusterIP');
    await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'client' },
      spec: { containers: [{ name: 'c', image: 'kdp/echo' }] } });
    await waitFor(async () => {
      const dns = await cluster!.client.list<any>({ group: 'discovery.k8s.io', version: 'v1',
        resource: 'endpointslices', namespace: 'kube-system' }, { labelSelector: 'kubernetes.io/service-name=kube-dns' });
      const ready = dns.items.flatMap((s: any) => s.endpoints ?? []).filter((e: any) => e.conditions?.ready);
      const c = await cluster!.client.get<any>(PODS, 'client');
      return ready.length === 2 && c.status?.podIP ? true : undefined;
    }, 30_000, 'client pod and both DNS endpoints ready');
  }, 60_000);
  afterAll(async () => { await cluster?.close(); });

  // TTL 30: kubeadm's Corefile, from the addon's coredns ConfigMap.
  it('a short name through the search list: the ClusterIP, authoritative', async () => {
    const svc = await cluster!.client.get<any>(SERVICES, 'web');
    const r = await look('web');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(';; web.default.svc.cluster.local. A: NOERROR (authoritative)');
    expect(r.out).toMatch(new RegExp(`web\\.default\\.svc\\.cluster\\.local\\.\\s+30\\s+IN\\s+A\\s+${svc.spec.clusterIP.replace(/\./g, '\\.')}`));
  });

  it('kube-dns across namespaces, SRV of a named port, PTR of an IP, JSON', async () => {
    const k = await look('kube-dns.kube-system', '-o', 'json');
    expect(JSON.parse(k.out).answers.map((a: any) => a.data)).toEqual(['10.96.0.10']);
    const srv = await look('_http._tcp.web.default.svc.cluster.local', '--type', 'SRV', '-o', 'json');
    expect(JSON.parse(srv.out).answers[0].data).toMatchObject({ port: 80, target: 'web.default.svc.cluster.local' });
    const ptr = await look('10.96.0.10', '-o', 'json');
    expect(JSON.parse(ptr.out)).toMatchObject({ type: 'PTR',
      answers: [{ data: 'kube-dns.kube-system.svc.cluster.local' }] });
  });

  it('an unknown name: NXDOMAIN and exit 1; bad flags name the flag', async () => {
    const r = await look('nope.default.svc.cluster.local');
    expect(r.code).toBe(1);
    expect(r.out).toContain('NXDOMAIN');
    expect((await look('web', '--type', 'MX')).err).toMatch(/--type: "MX" is not one of/);
    expect((await look('web', '--server', 'not an ip')).err).toMatch(/--server: "not an ip" is not IP\[:PORT\]/);
  });

  it('kdp trace POD NAME:PORT: the name resolved through the pod\'s search list, then traced', async () => {
    const r = await kdp('trace', '--data-dir', dataDir, '--proto', 'udp', '-o', 'json', 'client', 'kube-dns.kube-system:53');
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.target).toBe('service kube-system/kube-dns:53 (kube-dns.kube-system → 10.96.0.10)');
    expect(j.dns).toEqual({ name: 'kube-dns.kube-system', fqdn: 'kube-dns.kube-system.svc.cluster.local',
      ips: ['10.96.0.10'] });
    expect(j.destinations).toHaveLength(2);
    expect(j.destinations.every((d: any) => d.destination.endsWith(':53') && d.probability === 0.5)).toBe(true);
  });

  it('a Service name without a port takes its first port; a name that does not resolve is an error', async () => {
    const r = await kdp('trace', '--data-dir', dataDir, '-o', 'json', 'client', 'web');
    const j = JSON.parse(r.out);
    expect(j.target).toMatch(/^service default\/web:http \(web → 10\./);
    expect(j.packet.dport).toBe(80);
    expect(j.verdict).toBe('REJECT'); // no endpoints
    const bad = await kdp('trace', '--data-dir', dataDir, 'client', 'nope:80');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('DST: "nope" does not resolve in the cluster DNS (tried nope.default.svc.cluster.local');
    const port = await kdp('trace', '--data-dir', dataDir, 'client', 'web:https');
    expect(port.err).toContain('DST: web.default.svc.cluster.local has no port named "https"');
  });

  it('kdp verify checks the DNS path from every node and every Service name\'s answer', async () => {
    const r = await kdp('verify', '--data-dir', dataDir, '-o', 'json');
    expect(r.code, r.out).toBe(0);
    const checks = JSON.parse(r.out).checks;
    const path = checks.find((c: any) => c.name.startsWith('every node\'s pods reach the cluster DNS'));
    const answers = checks.find((c: any) => c.name.startsWith('every Service name resolves'));
    expect(path).toMatchObject({ cases: 2, failed: 0 }); // one node, UDP and TCP
    expect(answers).toMatchObject({ failed: 0 });
    expect(answers.cases).toBeGreaterThanOrEqual(3); // kubernetes, kube-dns, web
  });

  it('with the DNS pods gone, verify fails the DNS path and shows the REJECT', async () => {
    await cluster!.client.patch({ group: 'apps', version: 'v1', resource: 'deployments', namespace: 'kube-system' },
      'coredns', 'merge', { spec: { replicas: 0 } });
    await waitFor(async () => {
      const dns = await cluster!.client.list<any>({ group: 'discovery.k8s.io', version: 'v1',
        resource: 'endpointslices', namespace: 'kube-system' }, { labelSelector: 'kubernetes.io/service-name=kube-dns' });
      return dns.items.flatMap((s: any) => s.endpoints ?? []).length === 0 ? true : undefined;
    }, 30_000, 'no DNS endpoints');
    // Until kube-proxy has synced, its rules still send DNS to the old pods: verify says so.
    const path = await waitFor(async () => {
      const r = await kdp('verify', '--data-dir', dataDir, '-o', 'json');
      expect(r.code).toBe(1);
      const c = JSON.parse(r.out).checks.find((x: any) => x.name.startsWith('every node\'s pods reach the cluster DNS'));
      return /^REJECT/.test(c.failures[0]?.got ?? '') ? c : undefined;
    }, 30_000, 'kube-proxy synced without DNS endpoints');
    expect(path.failed).toBe(2);
    expect(path.failures[0]).toMatchObject({ expected: 'a ready DNS pod (none ready)' });
    expect(path.failures[0].got).toMatch(/^REJECT/);
  });
});
