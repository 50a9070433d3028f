// `kdp up` (virtual mode) installs the DNS addon as kubeadm does: kubectl get pods -A shows
// the two coredns pods in kube-system, kube-dns sits at 10.96.0.10 with dns, dns-tcp and
// metrics ports, the RBAC and ConfigMap are there; with `dns: false` (--no-dns) none of it.

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { dnsAddonObjects } from '../../src/cluster/addons/dns.js';
import { resolveClusterNetwork } from '../../src/cluster/network.js';
import { waitFor } from '../helpers/cluster.js';

const run = promisify(execFile);
const KUBECTL = '/usr/lib/google-cloud-sdk/bin/kubectl.1.32';
const core = (resource: string, namespace?: string) =>
  ({ group: '', version: 'v1', resource, ...(namespace ? { namespace } : {}) });

describe('kdp up installs the DNS addon', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-dns-up-'));
  const paths = dataDirPaths(dataDir);
  let cluster: RunningCluster | undefined;
  afterAll(async () => { await cluster?.close(); });

  it('coredns pods Running in kube-system behind kube-dns 10.96.0.10', async () => {
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'iptables', timeScale: 20,
      progress: () => undefined });
    const c = cluster.client;
    const svc = await c.get<any>(core('services', 'kube-system'), 'kube-dns');
    expect(svc.spec.clusterIP).toBe('10.96.0.10');
    expect(svc.spec.ports.map((p: any) => `${p.name} ${p.port}/${p.protocol}`))
      .toEqual(['dns 53/UDP', 'dns-tcp 53/TCP', 'metrics 9153/TCP']);
    expect(svc.spec.selector).toEqual({ 'k8s-app': 'kube-dns' });
    const cm = await c.get<any>(core('configmaps', 'kube-system'), 'coredns');
    expect(cm.data.Corefile).toContain('kubernetes cluster.local in-addr.arpa ip6.arpa');
    await c.get(core('serviceaccounts', 'kube-system'), 'coredns');
    const role = await c.get<any>({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' },
      'system:coredns');
    expect(role.rules.flatMap((r: any) => r.resources)).toEqual(
      ['endpoints', 'services', 'pods', 'namespaces', 'endpointslices']);
    await c.get({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings' },
      'system:coredns');
    const pods = await waitFor(async () => {
      const l = await c.list<any>(core('pods', 'kube-system'), { labelSelector: 'k8s-app=kube-dns' });
      const running = l.items.filter((p: any) => p.status?.phase === 'Running');
      return running.length === 2 ? running : undefined;
    }, 30_000, 'two Running coredns pods');
    expect(pods.every((p: any) => p.spec.containers[0].image === 'kdp/dns')).toBe(true);
    if (existsSync(KUBECTL)) {
      const out = (await run(KUBECTL, ['--kubeconfig', paths.kubeconfig, 'get', 'pods', '-A'])).stdout;
      expect(out.split('\n').filter((l) => /^kube-system\s+coredns-/.test(l))).toHaveLength(2);
    }
  });

  it('--no-dns leaves it out', async () => {
    await cluster?.close();
    cluster = undefined;
    const dir = mkdtempSync(join(tmpdir(), 'kdp-nodns-up-'));
    const other = await startCluster({ paths: dataDirPaths(dir), nodes: 1, port: 0,
      proxyMode: 'iptables', timeScale: 20, progress: () => undefined, dns: false });
    try {
      const svcs = await other.client.list(core('services', 'kube-system'));
      expect(svcs.items).toEqual([]);
      const deps = await other.client.list({ group: 'apps', version: 'v1', resource: 'deployments',
        namespace: 'kube-system' });
      expect(deps.items).toEqual([]);
    } finally {
      await other.close();
    }
  });
});

describe('addon objects', () => {
  it('dual stack: kube-dns gets the tenth address of both service CIDRs', () => {
    const net = resolveClusterNetwork({ ipFamily: 'dual' });
    const svc = dnsAddonObjects({ serviceCIDRs: net.serviceCIDRs }).find((o) => o.obj.kind === 'Service')!;
    expect((svc.obj as any).spec.clusterIPs).toEqual(['10.96.0.10', 'fd00:10:96::a']);
    expect((svc.obj as any).spec.ipFamilyPolicy).toBe('RequireDualStack');
  });
});
