import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Event, Node, Pod } from '../../src/api/types.js';
import { listItems, ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

const PODS = ref('pods', 'default');

function pod(name: string, spec: object = {}) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name },
    spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } };
}

async function scheduledNode(c: TestCluster, name: string): Promise<string> {
  return waitFor(async () => (await c.client.get<Pod>(PODS, name)).spec?.nodeName, 20_000,
    `${name} scheduled`);
}

async function unschedulable(c: TestCluster, name: string) {
  return waitFor(async () => {
    const p = await c.client.get<Pod>(PODS, name);
    return p.status?.conditions?.find((x) => x.type === 'PodScheduled' && x.status === 'False');
  }, 20_000, `${name} unschedulable`);
}

describe('scheduler against virtual nodes', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({
      timeScale: 0.01,
      nodes: [
        { name: 'n1', options: { taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }] } },
        { name: 'n2', options: { labels: { disk: 'ssd' } } },
        { name: 'n3', options: { cpu: '2' } },
      ],
    });
    await waitFor(async () => (await listItems<Node>(c.client, ref('nodes'))).length === 3);
  });
  afterAll(async () => { await c?.close(); });

  it('honours nodeSelector', async () => {
    await c.client.create(PODS, pod('ssd', { nodeSelector: { disk: 'ssd' } }));
    expect(await scheduledNode(c, 'ssd')).toBe('n2');
  });

  it('places a pod on a tainted node only when it tolerates the taint', async () => {
    const onN1 = { nodeSelector: { 'kubernetes.io/hostname': 'n1' } };
    await c.client.create(PODS, pod('tolerant', { ...onN1,
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' }] }));
    expect(await scheduledNode(c, 'tolerant')).toBe('n1');
    await c.client.create(PODS, pod('intolerant', onN1));
    const cond = await unschedulable(c, 'intolerant');
    expect(cond.reason).toBe('Unschedulable');
    expect(cond.message).toBe('0/3 nodes are available: 1 node(s) had untolerated taint ' +
      "{dedicated: infra}, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 " +
      'nodes are available: 3 Preemption is not helpful for scheduling.');
  });

  it('keeps an unschedulable pod Pending with a FailedScheduling event, then schedules it when a node changes', async () => {
    await c.client.create(PODS, pod('nvme', { affinity: { nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [
        { matchExpressions: [{ key: 'disk', operator: 'In', values: ['nvme'] }] }] } } } }));
    const cond = await unschedulable(c, 'nvme');
    expect(cond.message).toContain("2 node(s) didn't match Pod's node affinity/selector");
    const p = await c.client.get<Pod>(PODS, 'nvme');
    expect(p.status?.phase).toBe('Pending');
    expect(p.spec?.nodeName).toBeUndefined();
    const ev = await waitFor(async () => (await listItems<Event>(c.client, ref('events', 'default')))
      .find((e) => e.involvedObject.name === 'nvme' && e.reason === 'FailedScheduling'));
    expect(ev.type).toBe('Warning');
    expect(ev.message).toBe(cond.message);
    await c.client.patch(ref('nodes'), 'n3', 'merge', { metadata: { labels: { disk: 'nvme' } } });
    expect(await scheduledNode(c, 'nvme')).toBe('n3');
    const ok = await waitFor(async () => (await listItems<Event>(c.client, ref('events', 'default')))
      .find((e) => e.involvedObject.name === 'nvme' && e.reason === 'Scheduled'));
    expect(ok.message).toBe('Successfully assigned default/nvme to n3');
  });

  it('reports Insufficient cpu when no untainted node has room', async () => {
    await c.client.create(PODS, pod('big', {
      containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '3' } } }],
      nodeSelector: { 'kubernetes.io/hostname': 'n3' },
    }));
    const cond = await unschedulable(c, 'big');
    expect(cond.message).toBe('0/3 nodes are available: 1 Insufficient cpu, 1 node(s) ' +
      "didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {dedicated: infra}. " +
      'preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, ' +
      '2 Preemption is not helpful for scheduling.');
  });

  it('pods then run with IPs from their node', async () => {
    const p = await waitFor(async () => {
      const x = await c.client.get<Pod>(PODS, 'ssd');
      return x.status?.phase === 'Running' ? x : undefined;
    });
    expect(p.status?.podIP).toMatch(/^10\.244\.1\.\d+$/);
  });
});
