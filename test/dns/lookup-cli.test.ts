// `kdp dns lookup` on a virtual cluster: the same DNS server the coredns pods run, started on
// loopback over the cluster's records; short names through a pod's search list (ndots:5).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';

const SERVICES = { group: '', version: 'v1', resource: 'services', namespace: 'default' };

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
});
