import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/client/types.js';
import { buildKernelApplier } from '../../src/proxy/kernel-applier.js';
import { podNetnsName } from '../../src/kubelet/runtime-netns.js';
import { RuleHistory } from '../../src/proxy/history.js';
import { buildKubeProxy, type KubeProxy } from '../../src/proxy/proxy-server.js';
import { startApi } from '../helpers/cluster.js';
import { echoPod, runReady, startNetnsLab, type NetnsLab } from '../helpers/netns-lab.js';
import { probe, seenPod, seenSource } from '../helpers/netns-probe.js';
import { canUseNetns } from '../helpers/root.js';

// Service semantics in the real kernel, both nodes running kube-proxy in the same mode:
// NodePort from another node, eTP=Local keeping the client IP, ClientIP affinity, a Service
// without endpoints refusing, and a pod reaching itself through its Service (hairpin).
const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' } as const;
const EPS = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', namespace: 'default' } as const;

function service(name: string, clusterIP: string, extra: Record<string, unknown> = {}, nodePort?: number): KubeObject {
  return {
    apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' },
    spec: {
      clusterIP, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', ...(nodePort ? { nodePort } : {}) }],
      ...(nodePort ? { type: 'NodePort' } : {}), ...extra,
    },
  };
}

function slice(svc: string, backends: Array<{ ip: string; node: string }>): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: `${svc}-1`, namespace: 'default', labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: backends.map((b) => ({ addresses: [b.ip], conditions: { ready: true }, nodeName: b.node })),
  };
}

const run = canUseNetns(['ip', 'iptables-restore', 'iptables-save', 'nft', 'nsenter']);

describe.runIf(run).each(['iptables', 'nftables'] as const)('%s mode in the kernel', (mode) => {
  let lab: NetnsLab;
  let api: Awaited<ReturnType<typeof startApi>>;
  const proxies: KubeProxy[] = [];
  const a = echoPod('web-a', [{ containerPort: 8080 }]);
  const b = echoPod('web-b', [{ containerPort: 8080 }]);
  const client = echoPod('client', []);
  let ipA = '';
  let ipB = '';

  beforeAll(async () => {
    lab = await startNetnsLab(2);
    ipA = (await runReady(lab.nodes[0]!, a)).podIPs[0]!;
    ipB = (await runReady(lab.nodes[1]!, b)).podIPs[0]!;
    await runReady(lab.nodes[1]!, client);
    api = await startApi();
    const both = [{ ip: ipA, node: 'n1' }, { ip: ipB, node: 'n2' }];
    await api.client.create(SVC, service('web', '10.96.0.60', {}, 30080));
    await api.client.create(EPS, slice('web', both));
    await api.client.create(SVC, service('local', '10.96.0.61', { externalTrafficPolicy: 'Local' }, 30081));
    await api.client.create(EPS, slice('local', [{ ip: ipA, node: 'n1' }]));
    await api.client.create(SVC, service('sticky', '10.96.0.62', { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } } }));
    await api.client.create(EPS, slice('sticky', both));
    await api.client.create(SVC, service('empty', '10.96.0.63'));
    await api.client.create(SVC, service('solo', '10.96.0.64'));
    await api.client.create(EPS, slice('solo', [{ ip: ipA, node: 'n1' }]));
    for (const node of lab.nodes) {
      const proxy = await buildKubeProxy({
        client: api.client, nodeName: node.name, nodeIPs: [node.ip], mode, timeScale: 0.05,
        configText: 'clusterCIDR: 10.244.0.0/16\n',
        applier: buildKernelApplier(lab.exec, lab.topo.nodeNetns(node.name), mode),
        history: new RuleHistory(join(mkdtempSync(join(tmpdir(), 'kdp-rules-')), 'rules')),
      });
      await proxy.start();
      proxies.push(proxy);
      await proxy.synced();
    }
  }, 120_000);

  afterAll(async () => {
    for (const p of proxies) p.stop();
    await api?.close();
    await lab?.close();
  }, 30_000);

  const fromClient = (host: string, port: number) =>
    probe(lab.exec, podNetnsName(lab.topo.prefix, client.metadata.uid!), 'tcp', host, port);
  const fromNode = (i: number, host: string, port: number) => probe(lab.exec, lab.topo.nodeNetns(lab.nodes[i]!.name), 'tcp', host, port);

  it('a NodePort answers when reached from another node', async () => {
    const answer = await fromNode(1, lab.nodes[0]!.ip, 30080);
    expect(['web-a', 'web-b']).toContain(seenPod(answer));
  });

  it('eTP=Local keeps the client IP on a node port', async () => {
    const answer = await fromNode(1, lab.nodes[0]!.ip, 30081);
    expect(seenPod(answer)).toBe('web-a');
    expect(seenSource(answer)).toBe(lab.nodes[1]!.ip);
  });

  it('ClientIP affinity sends one client to the same backend every time', async () => {
    const seen = new Set<string | undefined>();
    for (let i = 0; i < 5; i++) seen.add(seenPod(await fromClient('10.96.0.62', 80)));
    expect(seen.size).toBe(1);
  });

  it('a Service without endpoints refuses the connection', async () => {
    await expect(fromClient('10.96.0.63', 80)).rejects.toThrow(/ECONNREFUSED|EHOSTUNREACH|refused|unreachable/i);
  });

  it('a pod reaches itself through its Service (hairpin)', async () => {
    const answer = await probe(lab.exec, podNetnsName(lab.topo.prefix, a.metadata.uid!), 'tcp', '10.96.0.64', 80);
    expect(seenPod(answer)).toBe('web-a');
  });
});
