// Cluster DNS end to end in netns mode (issue 14), both proxy modes: from inside a pod (its own
// resolv.conf, the system resolver and dig) names resolve through kube-dns — itself Service
// traffic through kube-proxy's rules to the coredns pods running kdp's DNS server — for every
// record type, across namespaces, as Services come, change and go; a hostname+subdomain pod
// behind a headless Service resolves; with one DNS pod deleted lookups keep working.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod, Service } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { kubectlFor } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const core = (resource: string, namespace = 'default') => ({ group: '', version: 'v1', resource, namespace });
const DIG = '/usr/bin/dig';

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter', 'unshare', 'iptables-restore']))
  .each(['iptables', 'nftables'] as const)('cluster DNS from inside pods (%s)', (mode) => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), `kdp-dns-e2e-${mode}-`)));
  let cluster: RunningCluster;
  const kubectl = (args: string[]) => kubectlFor(paths.kubeconfig)(args);
  const inPod = (...cmd: string[]) => kubectl(['exec', 'client', '--', ...cmd]);
  const dig = async (...q: string[]) => (await inPod(DIG, '+short', '+time=1', '+tries=1', ...q)).out.trim();

  const svc = (name: string, ns: string, spec: Record<string, unknown>): Service => ({ apiVersion: 'v1', kind: 'Service',
    metadata: { name, namespace: ns }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], ...spec } } as Service);
  const pod = (name: string, ns: string, extra: Record<string, unknown> = {}, labels: Record<string, string> = {}): Pod => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels },
    spec: { containers: [{ name: 'c', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }], ...extra } } as Pod);

  beforeAll(async () => {
    // resolvConf '': no upstream resolvers. The host's are out of the pod network's reach, and
    // glibc asks AAAA of a short name as given after the search list: each such lookup would wait
    // for the forwarder's timeout (2 s, twice) instead of an immediate REFUSED.
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: mode, timeScale: 5, dataPlane: 'netns',
      resolvConf: '', progress: () => {} });
    const c = cluster.client;
    await c.create({ group: '', version: 'v1', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace',
      metadata: { name: 'shop' } });
    await waitFor(async () => c.get(core('serviceaccounts', 'shop'), 'default').then(() => true, () => undefined),
      20_000, 'shop/default ServiceAccount');
    await c.create(core('pods'), { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'client', namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', 'infinity'] }] } } as Pod);
    await c.create(core('services'), svc('web', 'default', { selector: { app: 'web' } }));
    await c.create(core('pods'), pod('web-1', 'default', {}, { app: 'web' }));
    await c.create(core('services', 'shop'), svc('db', 'shop', { clusterIP: 'None', selector: { app: 'db' } }));
    await c.create(core('pods', 'shop'), pod('db-0', 'shop', { hostname: 'db-0', subdomain: 'db' }, { app: 'db' }));
    await c.create(core('services', 'shop'), svc('ext', 'shop', { type: 'ExternalName', externalName: 'example.org' }));
    // Ready: the client, and both DNS pods behind kube-dns.
    await waitFor(async () => {
      const dns = await c.list<Pod>(core('pods', 'kube-system'), { labelSelector: 'k8s-app=kube-dns' });
      const ready = (p: Pod) => p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True');
      const client = await c.get<Pod>(core('pods'), 'client');
      const db = await c.get<Pod>(core('pods', 'shop'), 'db-0');
      return dns.items.length === 2 && dns.items.every(ready) && ready(client) && ready(db) ? true : undefined;
    }, 90_000, 'DNS pods, client and db-0 Ready');
  }, 150_000);
  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
  }, 60_000);

  it('the pod\'s resolv.conf is the kubelet\'s ClusterFirst file', async () => {
    const r = await inPod('cat', '/etc/resolv.conf');
    expect(r.out).toMatch(/^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local( .*)?\nnameserver 10\.96\.0\.10\noptions ndots:5\n$/);
  });

  it('getent (the system resolver) finds short, namespaced and full names', async () => {
    const ip = (await cluster.client.get<Service>(core('services'), 'web')).spec!.clusterIP!;
    for (const name of ['web', 'web.default', 'web.default.svc.cluster.local', 'kubernetes.default']) {
      const r = await inPod('getent', 'hosts', name);
      expect(r.code, `${name}: ${r.err}`).toBe(0);
      if (name.startsWith('web')) expect(r.out).toMatch(new RegExp(`^${ip.replace(/\./g, '\\.')}\\s`));
    }
    expect((await inPod('getent', 'hosts', 'db.shop')).out).toContain(
      (await cluster.client.get<Pod>(core('pods', 'shop'), 'db-0')).status!.podIP!);
  });

  it('dig: A, SRV, PTR, headless hostname, pod A, ExternalName CNAME, NXDOMAIN', async () => {
    const web = (await cluster.client.get<Service>(core('services'), 'web')).spec!.clusterIP!;
    const dbIP = (await cluster.client.get<Pod>(core('pods', 'shop'), 'db-0')).status!.podIP!;
    expect(await dig('web.default.svc.cluster.local')).toBe(web);
    expect(await dig('SRV', '_http._tcp.web.default.svc.cluster.local')).toBe('0 100 80 web.default.svc.cluster.local.');
    expect(await dig('-x', web)).toBe('web.default.svc.cluster.local.');
    expect(await dig('db.shop.svc.cluster.local')).toBe(dbIP);
    expect(await dig('db-0.db.shop.svc.cluster.local')).toBe(dbIP);
    expect(await dig(`${dbIP.replace(/\./g, '-')}.shop.pod.cluster.local`)).toBe(dbIP);
    expect((await dig('CNAME', 'ext.shop.svc.cluster.local'))).toBe('example.org.');
    const nx = await inPod(DIG, '+time=1', '+tries=1', 'nope.default.svc.cluster.local');
    expect(nx.out).toContain('status: NXDOMAIN');
    // resolvConf '': the coredns pods have no upstream, so a name outside the cluster is refused.
    expect((await inPod(DIG, '+time=1', '+tries=1', 'example.org.')).out).toContain('status: REFUSED');
  });

  it('a new Service resolves within a second; a changed and a deleted one follow', async () => {
    const c = cluster.client;
    const made = await c.create<Service>(core('services'), svc('late', 'default', { selector: { app: 'none' } }));
    const ip = made.spec!.clusterIP!;
    await waitFor(async () => (await dig('late.default.svc.cluster.local')) === ip || undefined, 10_000, 'late resolves');
    await c.patch(core('services'), 'late', 'merge', { spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 },
      { name: 'metrics', port: 9090, targetPort: 9090 }] } });
    await waitFor(async () => (await dig('SRV', '_metrics._tcp.late.default.svc.cluster.local')) ===
      '0 100 9090 late.default.svc.cluster.local.' || undefined, 10_000, 'the new port\'s SRV record');
    await c.delete(core('services'), 'late');
    await waitFor(async () => (await dig('late.default.svc.cluster.local')) === '' || undefined, 10_000, 'late gone');
  });

  it('with one DNS pod deleted, lookups keep answering', async () => {
    const c = cluster.client;
    const dns = await c.list<Pod>(core('pods', 'kube-system'), { labelSelector: 'k8s-app=kube-dns' });
    await c.delete(core('pods', 'kube-system'), dns.items[0]!.metadata.name!);
    let failed = 0;
    for (let i = 0; i < 10; i++) {
      if ((await inPod('getent', 'hosts', 'web')).code !== 0) failed++;
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(failed).toBeLessThanOrEqual(2); // at most the lookups during kube-proxy's next sync
  });
});
