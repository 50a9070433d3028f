// The cloud-controller-manager's route and node lifecycle controllers over a fake lab cloud
// (issue 19): routes per podCIDR, NetworkUnavailable as upstream's route controller writes it
// (kept across kubelet heartbeats), routes of deleted nodes removed, a failed create reported;
// a NotReady Node whose machine is gone deleted with DeletingNode, a Ready one never looked up;
// --cloud-provider=none runs neither.

import { afterEach, describe, expect, it } from 'vitest';
import type { Node } from '../../src/api/types.js';
import type { CloudRoute, CloudRoutes } from '../../src/controllers/route/cloud.js';
import { buildMemoryRoutes } from '../../src/controllers/route/cloud.js';
import { ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

const NODES = ref('nodes');
const netUnavailable = (n: Node) => n.status?.conditions?.find((c) => c.type === 'NetworkUnavailable');

describe('route controller (lab cloud)', () => {
  let c: TestCluster | undefined;
  afterEach(async () => { await c?.close(); c = undefined; });

  it('creates a route per podCIDR, marks the Node NetworkUnavailable=False/RouteCreated, deletes routes of removed nodes', async () => {
    const routes = buildMemoryRoutes();
    c = await startTestCluster({ timeScale: 0.05, nodes: ['n1', 'n2'], controllers: { cloud: { routes } } });
    const want = (await waitFor(async () => {
      const list = await routes.list();
      return list.length === 2 ? list : undefined;
    }, 10_000, 'two routes')).map((r) => r.targetNode).sort();
    expect(want).toEqual(['n1', 'n2']);
    const n1 = await c.client.get<Node>(NODES, 'n1');
    expect((await routes.list()).find((r) => r.targetNode === 'n1')!.destinationCIDR).toBe(n1.spec!.podCIDRs![0]);
    const cond = await waitFor(async () => netUnavailable(await c!.client.get<Node>(NODES, 'n2')), 10_000, 'condition');
    expect(cond).toMatchObject({ status: 'False', reason: 'RouteCreated', message: 'RouteController created a route' });
    // A restarted kubelet's status post (its four conditions) leaves the route controller's.
    await c.agents.get('n2')!.stop();
    await c.addNode('n2');
    await new Promise((r) => setTimeout(r, 300));
    expect(netUnavailable(await c.client.get<Node>(NODES, 'n2'))).toMatchObject({ status: 'False', reason: 'RouteCreated' });
    await c.client.delete(NODES, 'n1');
    await waitFor(async () => (await routes.list()).every((r) => r.targetNode !== 'n1') || undefined, 10_000, 'n1 route gone');
  });

  it('a route the cloud refuses: FailedToCreateRoute and NetworkUnavailable=True/NoRouteCreated', async () => {
    const inner = buildMemoryRoutes();
    const routes: CloudRoutes = { list: () => inner.list(), delete: (r) => inner.delete(r),
      create: async (r: CloudRoute) => { throw new Error(`no room for ${r.destinationCIDR}`); } };
    c = await startTestCluster({ timeScale: 0.05, nodes: ['n1'], controllers: { cloud: { routes } } });
    const cond = await waitFor(async () => netUnavailable(await c!.client.get<Node>(NODES, 'n1')), 10_000, 'condition');
    expect(cond).toMatchObject({ status: 'True', reason: 'NoRouteCreated' });
    const ev = await waitFor(async () => (await c!.client.list<{ reason?: string; message?: string; metadata: object }>(ref('events')))
      .items.find((e) => e.reason === 'FailedToCreateRoute'), 10_000, 'event');
    expect(ev!.message).toMatch(/^Could not create route n1 10\.244\.\d+\.0\/24 for node n1: no room for/);
  });

  it('--cloud-provider=none: no routes, no condition', async () => {
    const routes = buildMemoryRoutes();
    c = await startTestCluster({ timeScale: 0.05, nodes: ['n1'],
      controllers: { cloudProvider: 'none', cloud: { routes, instances: { exists: async () => false } } } });
    await waitFor(async () => (await c!.client.get<Node>(NODES, 'n1')).spec?.podCIDRs?.length || undefined, 10_000, 'podCIDR');
    await new Promise((r) => setTimeout(r, 500));
    expect(await routes.list()).toEqual([]);
    expect(netUnavailable(await c.client.get<Node>(NODES, 'n1'))).toBeUndefined();
    // The cloud node lifecycle controller is off too: a NotReady node whose machine is "gone" stays.
    await c.agents.get('n1')!.stop();
    c.agents.clear();
    await new Promise((r) => setTimeout(r, 4000));
    expect((await c.client.list<Node>(NODES)).items.map((n) => n.metadata.name)).toEqual(['n1']);
  }, 20_000);
});

describe('cloud node lifecycle controller (lab cloud)', () => {
  let c: TestCluster | undefined;
  afterEach(async () => { await c?.close(); c = undefined; });

  it('deletes a NotReady Node whose machine is gone, after the grace period; keeps Ready ones and ones that exist', async () => {
    const gone = new Set<string>();
    const asked: string[] = [];
    c = await startTestCluster({ timeScale: 0.05, nodes: ['n1', 'n2', 'n3'], controllers: {
      cloud: { instances: { exists: async (n) => { asked.push(n); return !gone.has(n); } } } } });
    gone.add('n1'); // gone but still heartbeating: never looked up while Ready
    gone.add('n2');
    await c.agents.get('n2')!.stop();
    await c.agents.get('n3')!.stop(); // NotReady, machine still there: kept
    c.agents.delete('n2');
    c.agents.delete('n3');
    await waitFor(async () => !(await c!.client.list<Node>(NODES)).items.some((n) => n.metadata.name === 'n2') || undefined,
      15_000, 'n2 deleted');
    const left = (await c.client.list<Node>(NODES)).items;
    expect(left.map((n) => n.metadata.name).sort()).toEqual(['n1', 'n3']);
    expect(left.find((n) => n.metadata.name === 'n3')!.status!.conditions!.find((x) => x.type === 'Ready')!.status).toBe('Unknown');
    expect(asked).not.toContain('n1');
    const ev = await waitFor(async () => (await c!.client.list<{ reason?: string; message?: string; metadata: object }>(ref('events')))
      .items.find((e) => e.reason === 'DeletingNode'), 10_000, 'event');
    expect(ev!.message).toBe('Deleting node n2 because it does not exist in the cloud provider');
  }, 30_000);
});
