import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestServer, deployment } from './helpers/server.js';
import type { TestServer } from './helpers/server.js';

const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';

describe('REST semantics', () => {
  let s: TestServer;
  beforeEach(async () => { s = await buildTestServer(); });
  afterEach(async () => { await s.done(); });

  it('create sets uid, creationTimestamp, generation 1 and the store revision as RV', async () => {
    const r = await s.req('POST', DEPLOYS, deployment('web'));
    expect(r.status).toBe(201);
    const m = r.body.metadata;
    expect(m.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(m.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(m.generation).toBe(1);
    expect(m.resourceVersion).toBe(String(s.store.currentRevision()));
    expect(r.body.spec.strategy.type).toBe('RollingUpdate');
  });

  it('generateName produces a name with a 5-character suffix', async () => {
    const r = await s.req('POST', '/api/v1/namespaces/default/configmaps',
      { metadata: { generateName: 'cm-' }, data: { a: 'b' } });
    expect(r.status).toBe(201);
    expect(r.body.metadata.name).toMatch(/^cm-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('creating an existing object is 409 AlreadyExists with the upstream message', async () => {
    await s.req('POST', DEPLOYS, deployment('web'));
    const r = await s.req('POST', DEPLOYS, deployment('web'));
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', reason: 'AlreadyExists',
      message: 'deployments.apps "web" already exists',
      details: { name: 'web', group: 'apps', kind: 'deployments' } });
  });

  it('a missing object is 404 NotFound naming the resource', async () => {
    const r = await s.req('GET', `${DEPLOYS}/nosuch`);
    expect(r.status).toBe(404);
    expect(r.body.message).toBe('deployments.apps "nosuch" not found');
  });

  it('an unknown resource is 404 "the server could not find the requested resource"', async () => {
    const r = await s.req('GET', '/api/v1/namespaces/default/widgets');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'NotFound',
      message: 'the server could not find the requested resource' });
  });

  it('update with a stale resourceVersion is 409 Conflict', async () => {
    const c = await s.req('POST', DEPLOYS, deployment('web'));
    const stale = c.body;
    const withReplicas = (n: number) => ({ ...stale, spec: { ...stale.spec, replicas: n } });
    const u1 = await s.req('PUT', `${DEPLOYS}/web`, withReplicas(2));
    expect(u1.status).toBe(200);
    const u2 = await s.req('PUT', `${DEPLOYS}/web`, withReplicas(3));
    expect(u2.status).toBe(409);
    expect(u2.body.reason).toBe('Conflict');
    expect(u2.body.message).toContain('the object has been modified');
  });

  it('generation moves on spec changes only, never on metadata or status', async () => {
    const c = await s.req('POST', DEPLOYS, deployment('web'));
    const l = await s.req('PATCH', `${DEPLOYS}/web`, { metadata: { labels: { x: 'y' } } },
      { 'content-type': 'application/merge-patch+json' });
    expect(l.body.metadata.generation).toBe(1);
    const st = await s.req('PATCH', `${DEPLOYS}/web/status`, { status: { replicas: 5 } },
      { 'content-type': 'application/merge-patch+json' });
    expect(st.body.metadata.generation).toBe(1);
    expect(st.body.status.replicas).toBe(5);
    const sp = await s.req('PATCH', `${DEPLOYS}/web`, { spec: { replicas: 4 } },
      { 'content-type': 'application/merge-patch+json' });
    expect(sp.body.metadata.generation).toBe(2);
    expect(Number(sp.body.metadata.resourceVersion))
      .toBeGreaterThan(Number(c.body.metadata.resourceVersion));
  });

  it('a PUT of the main resource cannot change status', async () => {
    const c = await s.req('POST', DEPLOYS, deployment('web'));
    const u = await s.req('PUT', `${DEPLOYS}/web`, { ...c.body, status: { replicas: 9 } });
    expect(u.body.status).toBeUndefined();
  });

  it('list filters by label and field selectors and pages with limit/continue', async () => {
    for (const n of ['a', 'b', 'c', 'd']) {
      await s.req('POST', '/api/v1/namespaces/default/configmaps',
        { metadata: { name: n, labels: { tier: n === 'd' ? 'be' : 'fe' } } });
    }
    const sel = await s.req('GET', '/api/v1/namespaces/default/configmaps?labelSelector=tier%3Dfe');
    expect(sel.body.items.map((i: any) => i.metadata.name)).toEqual(['a', 'b', 'c']);
    const fs = await s.req('GET', '/api/v1/configmaps?fieldSelector=metadata.name%3Dc');
    expect(fs.body.items.map((i: any) => i.metadata.name)).toEqual(['c']);
    const p1 = await s.req('GET', '/api/v1/namespaces/default/configmaps?limit=3');
    expect(p1.body.items).toHaveLength(3);
    expect(p1.body.metadata.remainingItemCount).toBe(1);
    const p2 = await s.req('GET', '/api/v1/namespaces/default/configmaps?limit=3&continue=' +
      encodeURIComponent(p1.body.metadata.continue));
    expect(p2.body.items.map((i: any) => i.metadata.name)).toEqual(['d']);
    expect(p2.body.metadata.continue).toBeUndefined();
    const bad = await s.req('GET', '/api/v1/pods?fieldSelector=spec.nosuch%3Dx');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('field label not supported: spec.nosuch');
  });

  it('a body namespace different from the URL namespace is 400', async () => {
    const r = await s.req('POST', '/api/v1/namespaces/default/configmaps',
      { metadata: { name: 'x', namespace: 'other' } });
    expect(r.status).toBe(400);
  });

  it('PUT creates a missing Lease (create on update) but not a missing ConfigMap', async () => {
    const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'n1' },
      spec: { holderIdentity: 'n1' } };
    const r = await s.req('PUT', '/apis/coordination.k8s.io/v1/namespaces/default/leases/n1', lease);
    expect(r.status).toBe(201);
    const cm = await s.req('PUT', '/api/v1/namespaces/default/configmaps/nope',
      { metadata: { name: 'nope' } });
    expect(cm.status).toBe(404);
  });

  it('dryRun=All validates and returns the object without storing it', async () => {
    const r = await s.req('POST', `${DEPLOYS}?dryRun=All`, deployment('dry'));
    expect(r.status).toBe(201);
    expect((await s.req('GET', `${DEPLOYS}/dry`)).status).toBe(404);
  });
});
