import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointSlice, Node, Pod, ReplicaSet } from '../../src/api/types.js';
import { cidrContains } from '../../src/api/net.js';
import { listItems, ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

const RS = ref('replicasets', 'default', 'apps');
const PODS = ref('pods', 'default');
const ES = ref('endpointslices', 'default', 'discovery.k8s.io');

describe('replica set seed flow on virtual nodes', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ timeScale: 0.01, nodes: ['n1', 'n2', 'n3'] });
  });
  afterAll(async () => { await c?.close(); });

  it('gives every node a /24 of 10.244.0.0/16 in registration order', async () => {
    const nodes = await waitFor(async () => {
      const ns = await listItems<Node>(c.client, ref('nodes'));
      return ns.length === 3 && ns.every((n) => n.spec?.podCIDR) ? ns : undefined;
    });
    const byName = Object.fromEntries(nodes.map((n) => [n.metadata.name, n.spec!.podCIDR]));
    expect(byName).toEqual({ n1: '10.244.0.0/24', n2: '10.244.1.0/24', n3: '10.244.2.0/24' });
  });

  it('runs 3 replicas with IPs from their node podCIDR and lists them in an EndpointSlice', async () => {
    await c.client.create(ref('services', 'default'), {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    });
    await c.client.create(RS, {
      apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-rs' },
      spec: {
        replicas: 3, selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }] },
        },
      },
    });
    const pods = await waitFor(async () => {
      const ps = await listItems<Pod>(c.client, PODS, 'app=web');
      return ps.length === 3 && ps.every((p) => p.status?.phase === 'Running' && p.status.podIP
        && p.status.conditions?.some((x) => x.type === 'Ready' && x.status === 'True')) ? ps : undefined;
    }, 20_000, '3 running pods');
    const nodes = await listItems<Node>(c.client, ref('nodes'));
    for (const p of pods) {
      expect(p.metadata.name).toMatch(/^web-rs-[a-z0-9]{5}$/);
      expect(p.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', name: 'web-rs', controller: true });
      const node = nodes.find((n) => n.metadata.name === p.spec?.nodeName)!;
      expect(cidrContains(node.spec!.podCIDR!, p.status!.podIP!)).toBe(true);
      expect(p.status!.podIP!.endsWith('.1')).toBe(false); // the gateway is never handed out
      expect(p.status!.hostIP).toBe(node.status!.addresses!.find((a) => a.type === 'InternalIP')!.address);
    }
    const slice = await waitFor(async () => {
      const ss = await listItems<EndpointSlice>(c.client, ES, 'kubernetes.io/service-name=web');
      const s = ss[0];
      return ss.length === 1 && s && s.endpoints.length === 3
        && s.endpoints.every((e) => e.conditions?.ready) ? s : undefined;
    }, 20_000, 'endpoint slice with 3 ready endpoints');
    expect(slice.metadata.name).toMatch(/^web-/);
    expect(slice.metadata.labels?.['endpointslice.kubernetes.io/managed-by']).toBe('endpointslice-controller.k8s.io');
    expect(slice.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    expect(slice.endpoints.map((e) => e.addresses[0]).sort()).toEqual(pods.map((p) => p.status!.podIP).sort());
    for (const e of slice.endpoints) {
      const p = pods.find((x) => x.metadata.name === e.targetRef?.name)!;
      expect(e.nodeName).toBe(p.spec!.nodeName);
      expect(e.conditions).toEqual({ ready: true, serving: true, terminating: false });
    }
    const rs = await waitFor(async () => {
      const r = await c.client.get<ReplicaSet>(RS, 'web-rs');
      return r.status?.readyReplicas === 3 && r.status.availableReplicas === 3 ? r : undefined;
    });
    expect(rs.status).toMatchObject({ replicas: 3, fullyLabeledReplicas: 3, observedGeneration: 1 });
  });

  it('scaling down deletes pods gracefully: endpoints turn terminating, then disappear', async () => {
    await c.client.patch(RS, 'web-rs', 'merge', { spec: { replicas: 2 } });
    const terminating = await waitFor(async () => {
      const ss = await listItems<EndpointSlice>(c.client, ES, 'kubernetes.io/service-name=web');
      return ss[0]?.endpoints.find((e) => e.conditions?.terminating);
    }, 20_000, 'a terminating endpoint');
    expect(terminating.conditions).toEqual({ ready: false, serving: true, terminating: true });
    await waitFor(async () => {
      const ss = await listItems<EndpointSlice>(c.client, ES, 'kubernetes.io/service-name=web');
      const ps = await listItems<Pod>(c.client, PODS, 'app=web');
      return ss[0]?.endpoints.length === 2 && ps.length === 2;
    }, 20_000, 'two pods and two endpoints');
  });
});
