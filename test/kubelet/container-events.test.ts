// The kubelet's Events, as upstream records them: per container start, back-off and stop, and
// for the node when the kubelet starts.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Event, Pod } from '../../src/api/types.js';
import { containerEvents, killingEvents } from '../../src/kubelet/container-events.js';
import type { RuntimePodStatus } from '../../src/kubelet/runtime.js';
import { listItems, ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

const POD: Pod = {
  metadata: { name: 'web', namespace: 'shop', uid: 'u1' },
  spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
};
const st = (c: Partial<RuntimePodStatus['containers'][number]>): RuntimePodStatus => ({
  uid: 'u1', podIPs: [], containers: [{ name: 'app', state: 'running', ready: false, restartCount: 0, ...c }],
});

describe('container events', () => {
  it('records Pulled, Created and Started once per start, with the container as fieldPath', () => {
    const a = containerEvents(POD, undefined, st({ state: 'waiting', reason: 'ContainerCreating' }));
    expect(a.events).toEqual([]);
    const b = containerEvents(POD, a.marks, st({ startedAt: 't1' }));
    expect(b.events.map((e) => [e.reason, e.message, e.fieldPath])).toEqual([
      ['Pulled', 'Container image "nginx:1.27" already present on machine', 'spec.containers{app}'],
      ['Created', 'Created container: app', 'spec.containers{app}'],
      ['Started', 'Started container app', 'spec.containers{app}'],
    ]);
    expect(containerEvents(POD, b.marks, st({ startedAt: 't1', ready: true })).events).toEqual([]);
  });

  it('records BackOff once when a container enters CrashLoopBackOff, and a new start after it', () => {
    const a = containerEvents(POD, undefined, st({ startedAt: 't1' }));
    const b = containerEvents(POD, a.marks, st({ state: 'waiting', reason: 'CrashLoopBackOff', startedAt: 't1' }));
    expect(b.events).toEqual([{ type: 'Warning', reason: 'BackOff', fieldPath: 'spec.containers{app}',
      message: 'Back-off restarting failed container app in pod web_shop(u1)' }]);
    const c = containerEvents(POD, b.marks, st({ state: 'waiting', reason: 'CrashLoopBackOff', startedAt: 't1' }));
    expect(c.events).toEqual([]);
    const d = containerEvents(POD, c.marks, st({ startedAt: 't2', restartCount: 1 }));
    expect(d.events.map((e) => e.reason)).toEqual(['Pulled', 'Created', 'Started']);
  });

  it('records Killing for each running container when the pod stops', () => {
    expect(killingEvents(POD, st({ startedAt: 't1' }))).toEqual([{ type: 'Normal', reason: 'Killing',
      fieldPath: 'spec.containers{app}', message: 'Stopping container app' }]);
    expect(killingEvents(POD, st({ state: 'exited', exitCode: 0 }))).toEqual([]);
  });
});

describe('kubelet events in a cluster', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ timeScale: 0.01, nodes: ['n1'] });
  });
  afterAll(async () => { await c?.close(); });

  it('records the node\'s start and the pod\'s container start, as kubectl describe shows them', async () => {
    const events = async (ns: string) => listItems<Event>(c.client, { ...ref('events'), namespace: ns });
    await waitFor(async () => {
      const reasons = (await events('default')).filter((e) => e.involvedObject.name === 'n1')
        .map((e) => `${e.source?.component}/${e.reason}`);
      return ['kubelet/Starting', 'kubelet/NodeReady', 'node-controller/RegisteredNode']
        .every((r) => reasons.includes(r)) ? reasons : undefined;
    });
    await c.client.create({ ...ref('pods'), namespace: 'default' }, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1', namespace: 'default' },
      spec: { containers: [{ name: 'app', image: 'kdp/echo' }] },
    });
    const started = await waitFor(async () => {
      const evs = (await events('default')).filter((e) => e.involvedObject.name === 'p1');
      return evs.some((e) => e.reason === 'Started') ? evs : undefined;
    });
    const started1 = started.find((e) => e.reason === 'Started')!;
    expect(started1).toMatchObject({ type: 'Normal', message: 'Started container app',
      source: { component: 'kubelet', host: 'n1' } });
    expect(started1.involvedObject.fieldPath).toBe('spec.containers{app}');
  });
});
