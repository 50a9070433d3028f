import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type RunningApiServer } from '../../../src/apiserver/start.js';
import { caOf } from '../../../src/apiserver/pki/index.js';
import { subjectOf } from '../../../src/apiserver/pki/node-credentials.js';
import {
  buildInProcessNodeClients, nodeProcessClients, type NodeClients,
} from '../../../src/cluster/node-identity.js';
import { buildHttpClient } from '../../../src/client/http-client.js';
import { renderKubeconfig } from '../../../src/client/kubeconfig.js';
import type { Client } from '../../../src/client/types.js';
import { isKdpError } from '../../../src/errors.js';
import { buildNodeAgent, type NodeAgent } from '../../../src/kubelet/node-agent.js';
import { buildVirtualRuntime } from '../../../src/kubelet/runtime-virtual.js';
import { buildMemoryApplier } from '../../../src/proxy/applier.js';
import { RuleHistory, rulesDir } from '../../../src/proxy/history.js';
import { buildKubeProxy, type KubeProxy } from '../../../src/proxy/proxy-server.js';
import { writePrivateFile } from '../../../src/util/private-files.js';

// A node agent (kubelet + kube-proxy) connecting over HTTPS with its own certificates, as
// `kdp node` does, under the default Node,RBAC authorization and NodeRestriction: it
// registers, keeps its Lease, runs its pods and reports their status, deletes them when they
// terminate, and its kube-proxy programs Services; a controller-plane write (the pod's
// controller, the scheduler) is the admin's.
const ref = (resource: string, namespace?: string, group = '') =>
  ({ group, version: 'v1', resource, ...(namespace ? { namespace } : {}) });
const PODS = ref('pods', 'default');

let dir: string;
let server: RunningApiServer;
let admin: Client;
let clients: NodeClients;
let agent: NodeAgent;
let proxy: KubeProxy;
const applier = buildMemoryApplier('iptables');
const proxyErrors: unknown[] = [];

async function waitFor<T>(fn: () => Promise<T | undefined>, what: string): Promise<T> {
  const end = Date.now() + 15_000;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kdp-node-id-'));
  const dataDir = join(dir, 'data');
  server = await startApiServer({ dataDir, port: 0 });
  const kubeconfig = join(dir, 'kubeconfig');
  await writePrivateFile(kubeconfig, renderKubeconfig({ server: server.url,
    caPem: server.pki.caCertPem, token: server.pki.adminToken }));
  admin = buildHttpClient({ server: server.url, caPem: server.pki.caCertPem,
    token: server.pki.adminToken });
  clients = await nodeProcessClients(kubeconfig, dataDir, 'n1', admin, () => undefined);
  agent = buildNodeAgent({ client: clients.kubelet, nodeName: 'n1',
    runtime: buildVirtualRuntime({ timeScale: 0.01 }),
    options: { nodeIPs: ['172.18.0.2'], timeScale: 0.01 } });
  await agent.start();
  proxy = await buildKubeProxy({ client: clients.kubeProxy, nodeName: 'n1',
    nodeIPs: ['172.18.0.2'], mode: 'iptables', applier,
    history: new RuleHistory(rulesDir(dataDir, 'n1')), timeScale: 0.01,
    onError: (e) => proxyErrors.push(e) });
  await proxy.start();
}, 60_000);

afterAll(async () => {
  proxy?.stop();
  await agent?.stop();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a node agent with its own certificates under Node,RBAC and NodeRestriction', () => {
  it('acts as system:node:n1 and cannot touch another node', async () => {
    let err: unknown;
    try {
      await clients.kubelet.patch(ref('nodes'), 'n2', 'merge',
        { metadata: { labels: { a: 'b' } } });
    } catch (e) { err = e; }
    expect(isKdpError(err, 'KDP_FORBIDDEN') || isKdpError(err, 'KDP_NOT_FOUND')).toBe(true);
    try { await clients.kubelet.list(ref('secrets', 'default')); } catch (e) { err = e; }
    expect((err as Error).message).toContain('User "system:node:n1" cannot list resource ' +
      '"secrets"');
  });

  it('registers its Node, renews its Lease and turns Ready', async () => {
    await waitFor(async () => {
      const n = await admin.get<any>(ref('nodes'), 'n1');
      return n.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');
    }, 'n1 Ready');
    const lease = await waitFor(() => admin.get<any>(ref('leases', 'kube-node-lease',
      'coordination.k8s.io'), 'n1'), 'the n1 Lease');
    expect(lease.spec.holderIdentity).toBe('n1');
    const first = lease.spec.renewTime;
    await waitFor(async () => (await admin.get<any>(ref('leases', 'kube-node-lease',
      'coordination.k8s.io'), 'n1')).spec.renewTime !== first, 'a Lease renewal');
  });

  it('runs a pod bound to it, reports its status, and deletes it when it terminates',
    async () => {
      // The node needs a podCIDR (the controller manager's job; the admin's write here).
      await admin.patch(ref('nodes'), 'n1', 'merge', { spec: { podCIDR: '10.244.1.0/24',
        podCIDRs: ['10.244.1.0/24'] } });
      await admin.create(PODS, { metadata: { name: 'web', labels: { app: 'web' } },
        spec: { nodeName: 'n1', terminationGracePeriodSeconds: 0,
          containers: [{ name: 'c', image: 'kdp/echo:1' }] } });
      const running = await waitFor(async () => {
        const p = await admin.get<any>(PODS, 'web');
        return p.status?.phase === 'Running' && p.status.podIP ? p : undefined;
      }, 'pod web Running');
      expect(running.status.podIP).toMatch(/^10\.244\.1\./);
      await admin.delete(PODS, 'web', { gracePeriodSeconds: 1 });
      await waitFor(async () => {
        try { await admin.get(PODS, 'web'); return undefined; } catch (e) {
          return isKdpError(e, 'KDP_NOT_FOUND') ? true : undefined;
        }
      }, 'pod web deleted by its kubelet');
    });

  it('kube-proxy, as kubeadm\'s kube-proxy ServiceAccount, programs a Service', async () => {
    expect(subjectOf(readFileSync(join(dir, 'data', 'pki', 'nodes', 'n1', 'kube-proxy.crt'),
      'utf8')).commonName)
      .toBe('system:serviceaccount:kube-system:kube-proxy');
    await admin.create(ref('services', 'default'), { metadata: { name: 'echo' },
      spec: { selector: { app: 'echo' }, ports: [{ port: 80, protocol: 'TCP' }] } });
    await waitFor(async () => {
      await proxy.synced();
      const text = await applier.dump('IPv4');
      return text.includes('default/echo') ? true : undefined;
    }, 'rules for default/echo');
    expect(proxy.applyStatus().every((s) => !s.failed)).toBe(true);
    expect(proxyErrors).toEqual([]);
  });
});

describe('kdp up\'s in-process node clients', () => {
  it('carry the identities of the node\'s certificates', async () => {
    const make = buildInProcessNodeClients(server.server.service, join(dir, 'data'),
      caOf(server.pki));
    const n2 = await make('n2');
    let err: unknown;
    try { await n2.kubelet.get(ref('nodes'), 'n1'); } catch (e) { err = e; }
    expect((err as Error).message).toBe('nodes "n1" is forbidden: User "system:node:n2" ' +
      'cannot get resource "nodes" in API group "" at the cluster scope: node \'n2\' cannot ' +
      'read \'n1\', only its own Node object');
    expect((await n2.kubeProxy.list(ref('services'))).items.length).toBeGreaterThan(0);
  });
});
