import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestServer, deployment, pod } from './helpers/server.js';
import type { TestServer } from './helpers/server.js';

const PODS = '/api/v1/namespaces/default/pods';

describe('delete', () => {
  let s: TestServer;
  beforeEach(async () => { s = await buildTestServer(); });
  afterEach(async () => { await s.done(); });

  it('an unscheduled pod is removed at once', async () => {
    await s.req('POST', PODS, pod('p'));
    expect((await s.req('DELETE', `${PODS}/p`)).status).toBe(200);
    expect((await s.req('GET', `${PODS}/p`)).status).toBe(404);
  });

  it('a scheduled pod stays terminating until the kubelet confirms with grace 0', async () => {
    await s.req('POST', PODS, pod('p', {}, 'n1'));
    const d = await s.req('DELETE', `${PODS}/p`, { propagationPolicy: 'Background' });
    expect(d.body.metadata.deletionTimestamp).toBeDefined();
    expect(d.body.metadata.deletionGracePeriodSeconds).toBe(30);
    const g = await s.req('GET', `${PODS}/p`, undefined,
      { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    expect(g.body.rows[0].cells[2]).toBe('Terminating');
    await s.req('DELETE', `${PODS}/p`, { gracePeriodSeconds: 0 });
    expect((await s.req('GET', `${PODS}/p`)).status).toBe(404);
  });

  it('finalizers keep the object until they are removed', async () => {
    await s.req('POST', '/api/v1/namespaces/default/configmaps',
      { metadata: { name: 'c', finalizers: ['example.com/hold'] } });
    const d = await s.req('DELETE', '/api/v1/namespaces/default/configmaps/c');
    expect(d.body.metadata.deletionTimestamp).toBeDefined();
    expect((await s.req('GET', '/api/v1/namespaces/default/configmaps/c')).status).toBe(200);
    const p = await s.req('PATCH', '/api/v1/namespaces/default/configmaps/c',
      { metadata: { finalizers: null } }, { 'content-type': 'application/merge-patch+json' });
    expect(p.status).toBe(200);
    expect((await s.req('GET', '/api/v1/namespaces/default/configmaps/c')).status).toBe(404);
  });

  it('Foreground and Orphan propagation are recorded as finalizers for the GC', async () => {
    const D = '/apis/apps/v1/namespaces/default/deployments';
    await s.req('POST', D, deployment('f'));
    await s.req('POST', D, deployment('o'));
    const f = await s.req('DELETE', `${D}/f`, { propagationPolicy: 'Foreground' });
    expect(f.body.metadata.finalizers).toEqual(['foregroundDeletion']);
    const o = await s.req('DELETE', `${D}/o?propagationPolicy=Orphan`);
    expect(o.body.metadata.finalizers).toEqual(['orphan']);
  });

  it('a uid precondition that does not match is 409', async () => {
    await s.req('POST', PODS, pod('p'));
    const r = await s.req('DELETE', `${PODS}/p`, { preconditions: { uid: 'nope' } });
    expect(r.status).toBe(409);
  });

  it('deletecollection deletes what the selector matches', async () => {
    await s.req('POST', PODS, pod('a', { x: '1' }));
    await s.req('POST', PODS, pod('b', { x: '2' }));
    await s.req('DELETE', `${PODS}?labelSelector=x%3D1`);
    const l = await s.req('GET', PODS);
    expect(l.body.items.map((i: any) => i.metadata.name)).toEqual(['b']);
  });

  it('deleting a namespace marks it Terminating; its contents wait for the controller',
    async () => {
      await s.req('POST', '/api/v1/namespaces', { metadata: { name: 'tmp' } });
      await s.req('POST', '/api/v1/namespaces/tmp/configmaps', { metadata: { name: 'c' } });
      expect((await s.req('DELETE', '/api/v1/namespaces/tmp')).status).toBe(200);
      expect((await s.req('GET', '/api/v1/namespaces/tmp/configmaps/c')).status).toBe(200);
      const ns = await s.req('GET', '/api/v1/namespaces/tmp');
      expect(ns.body.status.phase).toBe('Terminating');
    });
});

describe('subresources', () => {
  let s: TestServer;
  beforeEach(async () => { s = await buildTestServer(); });
  afterEach(async () => { await s.done(); });
  const D = '/apis/apps/v1/namespaces/default/deployments';

  it('scale reads and writes spec.replicas through an autoscaling/v1 Scale', async () => {
    await s.req('POST', D, deployment('web'));
    const g = await s.req('GET', `${D}/web/scale`);
    expect(g.body).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1',
      spec: { replicas: 1 }, status: { replicas: 0, selector: 'app=web' } });
    const p = await s.req('PATCH', `${D}/web/scale`, { spec: { replicas: 4 } },
      { 'content-type': 'application/merge-patch+json' });
    expect(p.body.spec.replicas).toBe(4);
    const d = await s.req('GET', `${D}/web`);
    expect(d.body.spec.replicas).toBe(4);
    expect(d.body.metadata.generation).toBe(2);
    const stale = await s.req('PUT', `${D}/web/scale`, { ...g.body, spec: { replicas: 2 } });
    expect(stale.status).toBe(409);
  });

  it('binding sets spec.nodeName once and fails if the pod is already bound', async () => {
    await s.req('POST', '/api/v1/namespaces/default/pods', pod('p'));
    const b = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' },
      target: { kind: 'Node', name: 'n1' } };
    const r = await s.req('POST', '/api/v1/namespaces/default/pods/p/binding', b);
    expect(r.status).toBe(201);
    const p = await s.req('GET', '/api/v1/namespaces/default/pods/p');
    expect(p.body.spec.nodeName).toBe('n1');
    expect(p.body.status.conditions).toContainEqual(expect.objectContaining({ type: 'PodScheduled',
      status: 'True' }));
    const again = await s.req('POST', '/api/v1/namespaces/default/pods/p/binding',
      { ...b, target: { kind: 'Node', name: 'n2' } });
    expect(again.status).toBe(409);
    expect(again.body.message).toContain('is already assigned to node "n1"');
  });

  it('status writes change only status', async () => {
    await s.req('POST', D, deployment('web'));
    const cur = (await s.req('GET', `${D}/web`)).body;
    const r = await s.req('PUT', `${D}/web/status`, { ...cur, spec: { ...cur.spec, replicas: 7 },
      status: { replicas: 1, observedGeneration: 1 } });
    expect(r.status).toBe(200);
    expect(r.body.spec.replicas).toBe(1);
    expect(r.body.status).toEqual({ replicas: 1, observedGeneration: 1 });
  });

  it('pods/log asks the log provider (the node kubelet) for the chosen container', async () => {
    s.service.deps.logProvider = { logs: async (p, c) => `log of ${p.metadata.name}/${c}\n` };
    const base = pod('p');
    await s.req('POST', '/api/v1/namespaces/default/pods', { ...base, spec: { ...base.spec, nodeName: 'n1' } });
    const r = await s.req('GET', '/api/v1/namespaces/default/pods/p/log');
    expect(r.status).toBe(200);
    expect(r.text).toBe('log of p/c\n');
    // Not scheduled: no node to ask, an empty log (upstream's empty location).
    await s.req('POST', '/api/v1/namespaces/default/pods', pod('q'));
    const none = await s.req('GET', '/api/v1/namespaces/default/pods/q/log');
    expect([none.status, none.text]).toEqual([200, '']);
    const bad = await s.req('GET', '/api/v1/namespaces/default/pods/p/log?container=zz');
    expect(bad.status).toBe(400);
  });
});
