// The StatefulSet controller as upstream's: stable names and identity labels, OrderedReady
// creation and scale-down, recreation under the same name, Parallel management, a partitioned
// rolling update from the highest ordinal, status and events.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod, StatefulSet } from '../../src/api/types.js';
import type { KubeObject } from '../../src/client/types.js';
import { ordinalOf } from '../../src/controllers/statefulset/controller.js';
import { listItems, ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

const STS = ref('statefulsets', 'default', 'apps');
const PODS = ref('pods', 'default');

function sts(name: string, spec: Partial<NonNullable<StatefulSet['spec']>> = {}): StatefulSet {
  return { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace: 'default' },
    spec: { replicas: 3, serviceName: name, selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: 'kdp/echo' }] } }, ...spec } } as StatefulSet;
}

const ready = (p: Pod) => p.status?.phase === 'Running' &&
  !!p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

describe('ordinals', () => {
  it('parses <set>-<n> only', () => {
    expect(ordinalOf('web', 'web-0')).toBe(0);
    expect(ordinalOf('web', 'web-12')).toBe(12);
    expect(ordinalOf('web', 'web-01')).toBe(-1);
    expect(ordinalOf('web', 'web-x')).toBe(-1);
    expect(ordinalOf('web', 'webx-1')).toBe(-1);
  });
});

describe('StatefulSet controller on a cluster', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ timeScale: 0.05, nodes: ['n1', 'n2'], runtime: { readyDelayMs: 2000 } });
  });
  afterAll(async () => { await c?.close(); });

  const pods = async (app: string) => (await listItems<Pod>(c.client, PODS, `app=${app}`))
    .filter((p) => !p.metadata.deletionTimestamp)
    .sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
  const status = async (name: string) => (await c.client.get<StatefulSet>(STS, name)).status;

  /** Polls pods until `done`, asserting OrderedReady: pod i exists only when 0..i-1 are ready. */
  async function watchOrdered(app: string, done: (ps: Pod[]) => boolean): Promise<string[]> {
    const seen: string[] = [];
    await waitFor(async () => {
      const ps = await pods(app);
      for (const p of ps) {
        const i = ordinalOf(app, p.metadata.name!);
        if (!seen.includes(p.metadata.name!)) seen.push(p.metadata.name!);
        for (let j = 0; j < i; j++) {
          const pred = ps.find((x) => x.metadata.name === `${app}-${j}`);
          expect(pred && ready(pred), `${p.metadata.name} exists while ${app}-${j} is not ready`).toBe(true);
        }
      }
      return done(ps);
    }, 30_000, 'ordered pods');
    return seen;
  }

  it('creates web-0, web-1, web-2 in order with stable identity; status and events as upstream', async () => {
    await c.client.create(STS, sts('web'));
    const seen = await watchOrdered('web', (ps) => ps.length === 3 && ps.every(ready));
    expect(seen).toEqual(['web-0', 'web-1', 'web-2']);
    const ps = await pods('web');
    const set = await c.client.get<StatefulSet>(STS, 'web');
    for (const [i, p] of ps.entries()) {
      expect(p.metadata.name).toBe(`web-${i}`);
      expect(p.spec!.hostname).toBe(`web-${i}`);
      expect(p.spec!.subdomain).toBe('web');
      expect(p.metadata.labels).toMatchObject({ app: 'web', 'statefulset.kubernetes.io/pod-name': `web-${i}`,
        'apps.kubernetes.io/pod-index': String(i), 'controller-revision-hash': set.status?.updateRevision });
      expect(p.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'StatefulSet', name: 'web', controller: true });
    }
    await waitFor(async () => (await status('web'))?.readyReplicas === 3, 20_000, 'status');
    const st = await status('web');
    expect(st).toMatchObject({ replicas: 3, readyReplicas: 3, currentReplicas: 3, updatedReplicas: 3,
      availableReplicas: 3, observedGeneration: 1 });
    expect(st!.currentRevision).toBe(st!.updateRevision);
    expect(st!.updateRevision).toMatch(/^web-[a-z0-9]{10}$/);
    const events = await listItems<KubeObject & { reason: string; message: string }>(c.client, ref('events', 'default'));
    expect(events.map((e) => e.message)).toContain('create Pod web-0 in StatefulSet web successful');
  });

  it('recreates a deleted pod under the same name', async () => {
    const old = (await pods('web')).find((p) => p.metadata.name === 'web-1')!;
    await c.client.delete(PODS, 'web-1');
    const p = await waitFor(async () => {
      const x = (await pods('web')).find((q) => q.metadata.name === 'web-1');
      return x && x.metadata.uid !== old.metadata.uid && ready(x) ? x : undefined;
    }, 30_000, 'web-1 again');
    expect(p.spec!.hostname).toBe('web-1');
  });

  it('scales down from the highest ordinal, one at a time', async () => {
    await c.client.patch(STS, 'web', 'merge', { spec: { replicas: 5 } });
    await waitFor(async () => (await pods('web')).filter(ready).length === 5, 30_000, 'five');
    const orders: string[][] = [];
    await c.client.patch(STS, 'web', 'merge', { spec: { replicas: 2 } });
    await waitFor(async () => {
      const names = (await pods('web')).map((p) => p.metadata.name!);
      if (JSON.stringify(orders.at(-1)) !== JSON.stringify(names)) orders.push(names);
      return names.length === 2;
    }, 30_000, 'two');
    expect(orders.at(-1)).toEqual(['web-0', 'web-1']);
    // Each step removes the highest ordinal left.
    for (const names of orders) {
      const n = names.length;
      expect(names).toEqual(Array.from({ length: n }, (_, i) => `web-${i}`));
    }
    expect(orders.some((o) => o.length === 4)).toBe(true);
    await waitFor(async () => (await status('web'))?.replicas === 2, 20_000, 'status replicas 2');
  });

  it('a partitioned rolling update replaces only ordinals >= partition, highest first', async () => {
    await c.client.patch(STS, 'web', 'merge', { spec: { replicas: 4 } });
    await waitFor(async () => (await pods('web')).filter(ready).length === 4, 30_000, 'four');
    const before = (await status('web'))!.currentRevision;
    await c.client.patch(STS, 'web', 'merge', { spec: {
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } },
      template: { spec: { containers: [{ name: 'c', image: 'kdp/echo:v2' }] } } } });
    const updateRev = await waitFor(async () => {
      const s = await status('web');
      return s?.updateRevision !== before ? s?.updateRevision : undefined;
    }, 20_000, 'new revision');
    const deleted: string[] = [];
    let last = new Map<string, string>();
    await waitFor(async () => {
      const ps = await listItems<Pod>(c.client, PODS, 'app=web');
      const now = new Map(ps.map((p) => [p.metadata.name!, p.metadata.uid!]));
      for (const [n, uid] of last) if (now.get(n) !== uid && !deleted.includes(n)) deleted.push(n);
      last = now;
      const live = ps.filter((p) => !p.metadata.deletionTimestamp);
      return live.filter((p) => p.metadata.labels?.['controller-revision-hash'] === updateRev && ready(p)).length === 2;
    }, 30_000, 'two updated');
    expect(deleted).toEqual(['web-3', 'web-2']);
    const ps = await pods('web');
    expect(ps.map((p) => p.spec!.containers[0]!.image)).toEqual(['kdp/echo', 'kdp/echo', 'kdp/echo:v2', 'kdp/echo:v2']);
    await waitFor(async () => (await status('web'))?.updatedReplicas === 2, 20_000, 'updated 2');
    expect((await status('web'))!.currentRevision).toBe(before);
    // A pod below the partition is recreated from the current revision.
    await c.client.delete(PODS, 'web-0');
    await waitFor(async () => {
      const p = (await pods('web')).find((x) => x.metadata.name === 'web-0');
      return p && ready(p) && p.metadata.labels?.['controller-revision-hash'] === before;
    }, 30_000, 'web-0 at the old revision');
    // Both templates are kept as ControllerRevisions, numbered in order.
    const revs = await listItems<KubeObject & { revision: number }>(c.client, ref('controllerrevisions', 'default', 'apps'), 'app=web');
    expect(revs.map((r) => [r.metadata.name, r.revision]).sort((a, b) => Number(a[1]) - Number(b[1])))
      .toEqual([[before, 1], [updateRev, 2]]);
    // Partition 0 finishes the roll-out; currentRevision follows.
    await c.client.patch(STS, 'web', 'merge', { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } });
    await waitFor(async () => {
      const s = await status('web');
      return s?.currentRevision === updateRev && s.updatedReplicas === 4 && s.readyReplicas === 4;
    }, 30_000, 'rolled out');
  });

  it('Parallel creates all pods without waiting', async () => {
    await c.client.create(STS, sts('par', { podManagementPolicy: 'Parallel', replicas: 3 }));
    const ps = await waitFor(async () => {
      const x = await pods('par');
      return x.length === 3 ? x : undefined;
    }, 20_000, 'three pods');
    // Created before the first was ready (ready takes 2 s × 0.05 = 100 ms; creation is at once).
    expect(ps.map((p) => p.metadata.name)).toEqual(['par-0', 'par-1', 'par-2']);
  });

  it('deleting a StatefulSet garbage-collects its pods and revisions', async () => {
    await c.client.delete(STS, 'par');
    await waitFor(async () => (await pods('par')).length === 0
      && (await listItems(c.client, ref('controllerrevisions', 'default', 'apps'), 'app=par')).length === 0,
    30_000, 'pods and revisions gone');
  });

  it('refuses volumeClaimTemplates with a clear cause', async () => {
    const bad = sts('db', { volumeClaimTemplates: [{ metadata: { name: 'data' } }] });
    await expect(c.client.create(STS, bad)).rejects.toThrow(/spec\.volumeClaimTemplates: Forbidden: kdp has no PersistentVolumeClaims/);
  });
});
