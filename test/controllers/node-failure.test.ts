import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointSlice, Node, Pod } from '../../src/api/types.js';
import { cidrContains } from '../../src/api/net.js';
import { listItems, ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

const PODS = ref('pods', 'default');
const ES = ref('endpointslices', 'default', 'discovery.k8s.io');

describe('node failure timeline (timeScale 0.01)', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ timeScale: 0.01, nodes: ['n1', 'n2', 'n3'] });
  });
  afterAll(async () => { await c?.close(); });

  it('lease stops → Unknown + unreachable taint → eviction after tolerationSeconds → replacements elsewhere → slices follow', async () => {
    await c.client.create(ref('services', 'default'), {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    await c.client.create(ref('deployments', 'default', 'apps'), {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
      spec: {
        replicas: 6, selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'app', image: 'nginx' }] } },
      },
    });
    const before = await waitFor(async () => {
      const ps = await listItems<Pod>(c.client, PODS, 'app=web');
      const ss = await listItems<EndpointSlice>(c.client, ES, 'kubernetes.io/service-name=web');
      const ready = ss.flatMap((s) => s.endpoints).filter((e) => e.conditions?.ready).length;
      return ps.length === 6 && ps.every((p) => p.status?.phase === 'Running') && ready === 6
        ? ps : undefined;
    }, 30_000, '6 running pods in slices');
    // The admission plugin gave every pod the default 300 s unreachable toleration.
    expect(before[0]!.spec?.tolerations).toContainEqual({ key: 'node.kubernetes.io/unreachable',
      operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
    const victimNode = before[0]!.spec!.nodeName!;
    const victims = before.filter((p) => p.spec?.nodeName === victimNode);
    const victimNames = new Set(victims.map((p) => p.metadata.name));

    const order: string[] = [];
    const mark = (step: string) => { if (!order.includes(step)) order.push(step); };
    await c.agents.get(victimNode)!.stop();

    const final = await waitFor(async () => {
      const node = await c.client.get<Node>(ref('nodes'), victimNode);
      const ready = node.status?.conditions?.find((x) => x.type === 'Ready');
      if (ready?.status === 'Unknown') mark('node-unknown');
      if (node.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/unreachable'
        && t.effect === 'NoExecute')) mark('taint');
      const ps = await listItems<Pod>(c.client, PODS, 'app=web');
      const old = ps.filter((p) => victimNames.has(p.metadata.name));
      if (old.length && old.every((p) => p.status?.conditions?.some((x) => x.type === 'Ready'
        && x.status === 'False'))) mark('pods-not-ready');
      if (old.length && old.every((p) => p.metadata.deletionTimestamp)) mark('evicted');
      const fresh = ps.filter((p) => !victimNames.has(p.metadata.name) && !p.metadata.deletionTimestamp
        && p.status?.phase === 'Running');
      if (fresh.length === 6) mark('replacements-running');
      const ss = await listItems<EndpointSlice>(c.client, ES, 'kubernetes.io/service-name=web');
      const eps = ss.flatMap((s) => s.endpoints);
      const readyIps = new Set(eps.filter((e) => e.conditions?.ready).map((e) => e.addresses[0]));
      const freshInSlices = fresh.length === 6 && fresh.every((p) => readyIps.has(p.status!.podIP!));
      if (freshInSlices) mark('slices-updated');
      return freshInSlices && order.includes('evicted') ? { ps, eps, fresh } : undefined;
    }, 60_000, 'recovery on other nodes');

    expect(order).toEqual(['node-unknown', 'taint', 'pods-not-ready', 'evicted',
      'replacements-running', 'slices-updated']);
    const nodes = await listItems<Node>(c.client, ref('nodes'));
    const replacements = final.fresh.filter((p) => !before.some((b) => b.metadata.name === p.metadata.name));
    expect(replacements).toHaveLength(victims.length);
    for (const p of replacements) {
      expect(p.spec?.nodeName).not.toBe(victimNode);
      const n = nodes.find((x) => x.metadata.name === p.spec?.nodeName)!;
      expect(cidrContains(n.spec!.podCIDR!, p.status!.podIP!)).toBe(true);
      expect(victims.map((v) => v.status?.podIP)).not.toContain(p.status!.podIP);
    }
    // The evicted pods stay Terminating (their kubelet is gone) and are published as such.
    for (const v of victims) {
      const ep = final.eps.find((e) => e.targetRef?.name === v.metadata.name);
      expect(ep?.conditions).toEqual({ ready: false, serving: false, terminating: true });
    }
    // Each pod marked not ready gets upstream's Warning NodeNotReady; the node its Normal one.
    const events = await listItems<{ involvedObject: { kind: string; name: string }; type: string; reason: string;
      message: string; source?: { component?: string } } & Pod>(c.client, ref('events', 'default'));
    for (const v of victims) {
      expect(events.find((e) => e.involvedObject.kind === 'Pod' && e.involvedObject.name === v.metadata.name
        && e.reason === 'NodeNotReady')).toMatchObject({ type: 'Warning', message: 'Node is not ready',
        source: { component: 'node-controller' } });
    }
  });
});
