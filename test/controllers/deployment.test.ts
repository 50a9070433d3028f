import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment, EndpointSlice, Pod, ReplicaSet } from '../../src/api/types.js';
import { cidrContains } from '../../src/api/net.js';
import type { Node } from '../../src/api/types.js';
import { listItems, ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

const DEP = ref('deployments', 'default', 'apps');
const RS = ref('replicasets', 'default', 'apps');
const PODS = ref('pods', 'default');
const ES = ref('endpointslices', 'default', 'discovery.k8s.io');
const REV = 'deployment.kubernetes.io/revision';

function deployment(name: string, image: string, replicas: number, extra: object = {}) {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
    spec: {
      replicas, selector: { matchLabels: { app: name } }, ...extra,
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image, ports: [{ containerPort: 8080 }] }] },
      },
    },
  };
}

/** The check `kubectl rollout status` makes. */
function rolledOut(d: Deployment): boolean {
  const s = d.status ?? {};
  const want = d.spec?.replicas ?? 1;
  return (d.metadata.generation ?? 0) <= (s.observedGeneration ?? 0)
    && (s.updatedReplicas ?? 0) === want && (s.replicas ?? 0) === want
    && (s.availableReplicas ?? 0) === want
    && !!s.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'NewReplicaSetAvailable');
}

async function waitRolledOut(c: TestCluster, name: string): Promise<Deployment> {
  return waitFor(async () => {
    const d = await c.client.get<Deployment>(DEP, name);
    return rolledOut(d) ? d : undefined;
  }, 30_000, `deployment ${name} rolled out`);
}

const running = (p: Pod) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp;

describe('deployment controller', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ timeScale: 0.005, nodes: ['n1', 'n2', 'n3'] });
  });
  afterAll(async () => { await c?.close(); });

  it('a 3-replica deployment behind a service ends with 3 running pods in one EndpointSlice', async () => {
    await c.client.create(ref('services', 'default'), {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    await c.client.create(DEP, deployment('web', 'nginx:1', 3));
    const d = await waitRolledOut(c, 'web');
    expect(d.metadata.annotations?.[REV]).toBe('1');
    expect(d.status?.conditions?.find((x) => x.type === 'Available'))
      .toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
    const rss = await listItems<ReplicaSet>(c.client, RS, 'app=web');
    expect(rss).toHaveLength(1);
    const hash = rss[0]!.metadata.labels?.['pod-template-hash'];
    expect(rss[0]!.metadata.name).toBe(`web-${hash}`);
    expect(rss[0]!.metadata.annotations?.[REV]).toBe('1');
    const pods = (await listItems<Pod>(c.client, PODS, 'app=web')).filter(running);
    expect(pods).toHaveLength(3);
    const nodes = await listItems<Node>(c.client, ref('nodes'));
    for (const p of pods) {
      expect(p.metadata.labels?.['pod-template-hash']).toBe(hash);
      const n = nodes.find((x) => x.metadata.name === p.spec?.nodeName)!;
      expect(cidrContains(n.spec!.podCIDR!, p.status!.podIP!)).toBe(true);
    }
    const slices = await waitFor(async () => {
      const ss = await listItems<EndpointSlice>(c.client, ES, 'kubernetes.io/service-name=web');
      return ss.length === 1 && ss[0]!.endpoints.filter((e) => e.conditions?.ready).length === 3
        ? ss : undefined;
    });
    expect(slices[0]!.endpoints.map((e) => e.addresses[0]).sort())
      .toEqual(pods.map((p) => p.status!.podIP).sort());
  });

  it('a template change rolls to a new ReplicaSet (revision 2) and scales the old one to 0', async () => {
    await c.client.patch(DEP, 'web', 'merge',
      { spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:2',
        ports: [{ containerPort: 8080 }] }] } } } });
    const d = await waitFor(async () => {
      const x = await c.client.get<Deployment>(DEP, 'web');
      return x.metadata.annotations?.[REV] === '2' && rolledOut(x) ? x : undefined;
    }, 30_000, 'revision 2 rolled out');
    expect(d.status?.updatedReplicas).toBe(3);
    const rss = await listItems<ReplicaSet>(c.client, RS, 'app=web');
    expect(rss).toHaveLength(2);
    const byRev = Object.fromEntries(rss.map((r) => [r.metadata.annotations?.[REV], r]));
    expect(byRev['1']!.spec?.replicas).toBe(0);
    expect(byRev['2']!.spec?.replicas).toBe(3);
    expect(byRev['2']!.spec?.template?.spec?.containers[0]!.image).toBe('nginx:2');
    const pods = await waitFor(async () => {
      const ps = await listItems<Pod>(c.client, PODS, 'app=web');
      return ps.length === 3 && ps.every(running) ? ps : undefined;
    }, 30_000, 'old pods gone');
    expect(pods.every((p) => p.spec?.containers[0]!.image === 'nginx:2')).toBe(true);
  });

  it('rollout undo (the template patched back) reuses the first ReplicaSet as revision 3', async () => {
    const rss = await listItems<ReplicaSet>(c.client, RS, 'app=web');
    const first = rss.find((r) => r.metadata.annotations?.[REV] === '1')!;
    const template = structuredClone(first.spec!.template!);
    delete template.metadata!.labels!['pod-template-hash'];
    await c.client.patch(DEP, 'web', 'json', [{ op: 'replace', path: '/spec/template', value: template }]);
    const d = await waitFor(async () => {
      const x = await c.client.get<Deployment>(DEP, 'web');
      return x.metadata.annotations?.[REV] === '3' && rolledOut(x) ? x : undefined;
    }, 30_000, 'revision 3 rolled out');
    expect(d.status?.replicas).toBe(3);
    const after = await c.client.get<ReplicaSet>(RS, first.metadata.name!);
    expect(after.metadata.annotations?.[REV]).toBe('3');
    expect(after.metadata.annotations?.['deployment.kubernetes.io/revision-history']).toBe('1');
    expect(after.spec?.replicas).toBe(3);
    expect(await listItems<ReplicaSet>(c.client, RS, 'app=web')).toHaveLength(2);
  });

  it('scaling the deployment scales its only active ReplicaSet', async () => {
    await c.client.patch(DEP, 'web', 'merge', { spec: { replicas: 5 } });
    await waitFor(async () => {
      const x = await c.client.get<Deployment>(DEP, 'web');
      return x.spec?.replicas === 5 && rolledOut(x);
    }, 30_000, 'scaled to 5');
    const pods = await waitFor(async () => {
      const ps = (await listItems<Pod>(c.client, PODS, 'app=web')).filter(running);
      return ps.length === 5 ? ps : undefined;
    });
    expect(new Set(pods.map((p) => p.metadata.labels?.['pod-template-hash'])).size).toBe(1);
  });

  it('Recreate removes every old pod before any new one starts', async () => {
    await c.client.create(DEP, deployment('rec', 'busybox:1', 2, { strategy: { type: 'Recreate' } }));
    await waitRolledOut(c, 'rec');
    const seen: Array<{ image: string; running: boolean }[]> = [];
    await c.client.patch(DEP, 'rec', 'merge',
      { spec: { template: { spec: { containers: [{ name: 'app', image: 'busybox:2' }] } } } });
    await waitFor(async () => {
      const ps = await listItems<Pod>(c.client, PODS, 'app=rec');
      seen.push(ps.map((p) => ({ image: p.spec!.containers[0]!.image!, running: running(p) })));
      const x = await c.client.get<Deployment>(DEP, 'rec');
      return x.metadata.annotations?.[REV] === '2' && rolledOut(x)
        && ps.length === 2 && ps.every((p) => p.spec!.containers[0]!.image === 'busybox:2');
    }, 30_000, 'recreate rollout');
    for (const snap of seen) {
      const images = new Set(snap.map((s) => s.image));
      expect(images.size, JSON.stringify(snap)).toBeLessThanOrEqual(1);
    }
  });
});
