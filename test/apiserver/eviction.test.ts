import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestServer, pod } from './helpers/server.js';
import type { TestServer } from './helpers/server.js';

const PODS = '/api/v1/namespaces/default/pods';
const eviction = (name: string, deleteOptions?: Record<string, unknown>) => ({
  apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' },
  ...(deleteOptions ? { deleteOptions } : {}),
});

describe('pods/eviction', () => {
  let s: TestServer;
  beforeEach(async () => { s = await buildTestServer(); });
  afterEach(async () => { await s.done(); });

  it('is listed in discovery as pods/eviction of kind policy/v1 Eviction', async () => {
    const r = await s.req('GET', '/api/v1');
    const e = r.body.resources.find((x: { name: string }) => x.name === 'pods/eviction');
    expect(e).toMatchObject({ kind: 'Eviction', group: 'policy', version: 'v1',
      verbs: ['create'] });
  });

  it('evicting an unscheduled pod deletes it and answers a Status of success', async () => {
    await s.req('POST', PODS, pod('p'));
    const r = await s.req('POST', `${PODS}/p/eviction`, eviction('p'));
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ kind: 'Status', status: 'Success' });
    expect((await s.req('GET', `${PODS}/p`)).status).toBe(404);
  });

  it('a scheduled pod is deleted gracefully, with the deleteOptions grace period', async () => {
    await s.req('POST', PODS, pod('a', {}, 'n1'));
    await s.req('POST', PODS, pod('b', {}, 'n1'));
    expect((await s.req('POST', `${PODS}/a/eviction`, eviction('a'))).status).toBe(201);
    const a = await s.req('GET', `${PODS}/a`);
    expect(a.body.metadata.deletionGracePeriodSeconds).toBe(30);
    const r = await s.req('POST', `${PODS}/b/eviction`, eviction('b', { gracePeriodSeconds: 0 }));
    expect(r.status).toBe(201);
    expect((await s.req('GET', `${PODS}/b`)).status).toBe(404);
  });

  it('an unknown pod is 404 and a body naming another pod is 400', async () => {
    const r = await s.req('POST', `${PODS}/nope/eviction`, eviction('nope'));
    expect(r.status).toBe(404);
    expect(r.body.message).toBe('pods "nope" not found');
    await s.req('POST', PODS, pod('p'));
    const bad = await s.req('POST', `${PODS}/p/eviction`, eviction('other'));
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('name in URL does not match name in Eviction object');
    expect((await s.req('GET', `${PODS}/p`)).status).toBe(200);
  });

  it('a dry run and a failed uid precondition leave the pod', async () => {
    await s.req('POST', PODS, pod('p'));
    const dry = await s.req('POST', `${PODS}/p/eviction?dryRun=All`, eviction('p'));
    expect(dry.status).toBe(201);
    const pre = await s.req('POST', `${PODS}/p/eviction`,
      eviction('p', { preconditions: { uid: 'not-the-uid' } }));
    expect(pre.status).toBe(409);
    expect((await s.req('GET', `${PODS}/p`)).status).toBe(200);
  });
});
