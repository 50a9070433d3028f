// The DaemonSet controller as upstream's: one pod per eligible node (selector, affinity, taints
// with the daemon tolerations), a new node gets one, a rolling update within maxUnavailable,
// status counts.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonSet, Node, Pod } from '../../src/api/types.js';
import type { KubeObject } from '../../src/client/types.js';
import { daemonPodTolerations, nodeShouldRun, targetNode, templateHash } from '../../src/controllers/daemonset/controller.js';
import { listItems, ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

const DS = ref('daemonsets', 'kube-system', 'apps');
const PODS = ref('pods', 'kube-system');

function node(name: string, more: Partial<Node['spec']> = {}, labels: Record<string, string> = {}): Node {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
    spec: { ...more } } as Node;
}

function ds(spec: Partial<NonNullable<DaemonSet['spec']>> = {}, podSpec: Record<string, unknown> = {}): DaemonSet {
  return { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent', namespace: 'kube-system' },
    spec: { selector: { matchLabels: { app: 'agent' } },
      template: { metadata: { labels: { app: 'agent' } },
        spec: { containers: [{ name: 'a', image: 'kdp/echo' }], ...podSpec } }, ...spec } } as DaemonSet;
}

describe('which nodes a daemon runs on', () => {
  it('the daemon tolerations cover not-ready/unreachable (NoExecute) and the pressure/unschedulable taints', () => {
    expect(daemonPodTolerations(ds().spec!.template).map((t) => `${t.key}:${t.effect}`)).toEqual([
      'node.kubernetes.io/not-ready:NoExecute', 'node.kubernetes.io/unreachable:NoExecute',
      'node.kubernetes.io/disk-pressure:NoSchedule', 'node.kubernetes.io/memory-pressure:NoSchedule',
      'node.kubernetes.io/pid-pressure:NoSchedule', 'node.kubernetes.io/unschedulable:NoSchedule']);
    expect(daemonPodTolerations(ds({}, { hostNetwork: true }).spec!.template).at(-1)!.key)
      .toBe('node.kubernetes.io/network-unavailable');
  });

  it('a control-plane NoSchedule taint keeps it off unless tolerated; NoExecute also evicts', () => {
    const cp = node('cp', { taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] });
    expect(nodeShouldRun(ds(), cp)).toEqual({ shouldRun: false, shouldContinueRunning: true });
    expect(nodeShouldRun(ds({}, { tolerations: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists',
      effect: 'NoSchedule' }] }), cp)).toEqual({ shouldRun: true, shouldContinueRunning: true });
    expect(nodeShouldRun(ds(), node('x', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoExecute' }] })))
      .toEqual({ shouldRun: false, shouldContinueRunning: false });
    expect(nodeShouldRun(ds(), node('u', { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] })).shouldRun).toBe(true);
    expect(nodeShouldRun(ds({}, { nodeSelector: { disk: 'ssd' } }), node('y')).shouldRun).toBe(false);
    expect(nodeShouldRun(ds({}, { nodeSelector: { disk: 'ssd' } }), node('y', {}, { disk: 'ssd' })).shouldRun).toBe(true);
  });

  it('the template hash follows the template only', () => {
    expect(templateHash(ds().spec!.template)).toBe(templateHash(ds().spec!.template));
    expect(templateHash(ds().spec!.template)).not.toBe(templateHash(ds({}, { hostNetwork: true }).spec!.template));
    expect(templateHash(ds().spec!.template)).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{10}$/);
  });
});

describe('DaemonSet controller on a cluster', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ timeScale: 0.05, nodes: ['n1', 'n2', 'n3'] });
    await c.client.create(ref('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } })
      .catch(() => undefined);
  });
  afterAll(async () => { await c?.close(); });

  const mine = async () => (await listItems<Pod>(c.client, PODS, 'app=agent')).filter((p) => !p.metadata.deletionTimestamp);
  const status = async () => (await c.client.get<DaemonSet>(DS, 'agent')).status;

  it('one pod per node, bound by the scheduler through node affinity; status counts them', async () => {
    await c.client.patch(ref('nodes'), 'n3', 'merge', { spec: { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] } });
    await c.client.create(DS, ds());
    const pods = await waitFor(async () => {
      const ps = await mine();
      return ps.length === 2 && ps.every((p) => p.spec?.nodeName && p.status?.phase === 'Running') ? ps : undefined;
    }, 20_000, 'two running daemon pods');
    expect(pods.map((p) => p.spec!.nodeName).sort()).toEqual(['n1', 'n2']);
    for (const p of pods) {
      expect(targetNode(p)).toBe(p.spec!.nodeName);
      expect(p.metadata.generateName).toBe('agent-');
      expect(p.metadata.labels).toMatchObject({ app: 'agent', 'pod-template-generation': '1' });
      expect(p.metadata.labels!['controller-revision-hash']).toMatch(/^[a-z0-9]{10}$/);
    }
    await waitFor(async () => (await status())?.numberAvailable === 2, 20_000, 'status');
    expect(await status()).toMatchObject({ desiredNumberScheduled: 2, currentNumberScheduled: 2, numberMisscheduled: 0,
      numberReady: 2, updatedNumberScheduled: 2, numberAvailable: 2, numberUnavailable: 0, observedGeneration: 1 });
  });

  it('tolerating the taint adds the node (rolling the others); a new node gets its pod', async () => {
    await c.client.patch(DS, 'agent', 'merge', { spec: { template: { spec: { tolerations: [
      { key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }] } } } });
    await c.addNode('n4');
    const hash = templateHash((await c.client.get<DaemonSet>(DS, 'agent')).spec!.template);
    const pods = await waitFor(async () => {
      const ps = await mine();
      return ps.length === 4 && ps.every((p) => p.metadata.labels?.['controller-revision-hash'] === hash
        && p.status?.phase === 'Running') ? ps : undefined;
    }, 30_000, 'four updated daemon pods');
    expect(pods.map((p) => p.spec!.nodeName).sort()).toEqual(['n1', 'n2', 'n3', 'n4']);
    await waitFor(async () => (await status())?.updatedNumberScheduled === 4 && (await status())?.numberAvailable === 4,
      20_000, 'status after the update');
    expect((await status())?.observedGeneration).toBe(2);
  });

  it('a rolling update never has more than maxUnavailable nodes without an available pod', async () => {
    let worst = 0;
    let done = false;
    const watch = (async () => {
      while (!done) {
        const s = await status();
        if (s) worst = Math.max(worst, s.numberUnavailable ?? 0);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await c.client.patch(DS, 'agent', 'merge', { spec: { template: { metadata: { labels: { app: 'agent', v: '3' } } } } });
    const hash = templateHash((await c.client.get<DaemonSet>(DS, 'agent')).spec!.template);
    await waitFor(async () => {
      const ps = await mine();
      return ps.length === 4 && ps.every((p) => p.metadata.labels?.['controller-revision-hash'] === hash
        && p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'));
    }, 30_000, 'rolled');
    done = true;
    await watch;
    expect(worst).toBeLessThanOrEqual(1);
    const events = await listItems<KubeObject & { reason: string; message: string }>(c.client, ref('events', 'kube-system'));
    expect(events.some((e) => e.reason === 'SuccessfulDelete' && e.message.startsWith('Deleted pod: agent-'))).toBe(true);
  });

  it('each template is a ControllerRevision numbered in order (kubectl rollout history ds)', async () => {
    const ds2 = await c.client.get<DaemonSet>(DS, 'agent');
    const hash = templateHash(ds2.spec!.template);
    const revs = await waitFor(async () => {
      const rs = await listItems<KubeObject & { revision: number }>(c.client, ref('controllerrevisions', 'kube-system', 'apps'));
      return rs.some((r) => r.metadata.name === `agent-${hash}`) ? rs : undefined;
    }, 20_000, 'revisions');
    expect(revs.map((r) => r.revision).sort()).toEqual([1, 2, 3]);
    expect(revs.find((r) => r.metadata.name === `agent-${hash}`)!.revision).toBe(3);
    for (const r of revs) expect(r.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'DaemonSet', name: 'agent', controller: true });
  });

  it('a node that stops matching loses its pod', async () => {
    await c.client.patch(DS, 'agent', 'merge', { spec: { template: { spec: { nodeSelector: { 'kubernetes.io/hostname': 'n1' } } } } });
    await waitFor(async () => {
      const ps = await mine();
      return ps.length === 1 && ps[0]!.spec?.nodeName === 'n1';
    }, 30_000, 'only n1');
  });
});
