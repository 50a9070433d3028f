import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestServer, deployment } from './helpers/server.js';
import type { TestServer } from './helpers/server.js';

const PODS = '/api/v1/namespaces/default/pods';

function pod(name: string, container: Record<string, unknown> = {}) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, unknownMeta: 'x' },
    spec: { containers: [{ name: 'c', image: 'nginx', ...container }], bogusSpec: true } };
}

describe('server-side field validation of unknown fields (fieldValidation)', () => {
  let s: TestServer;
  beforeAll(async () => { s = await buildTestServer(); });
  afterAll(async () => { await s.done(); });

  it('Strict refuses a create with upstream\'s strict decoding error, in document order', async () => {
    const r = await s.req('POST', `${PODS}?fieldValidation=Strict`, pod('a', { unknownNested: 1 }));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', message:
      'Pod in version "v1" cannot be handled as a Pod: strict decoding error: ' +
      'unknown field "metadata.unknownMeta", unknown field "spec.containers[0].unknownNested", ' +
      'unknown field "spec.bogusSpec"' });
    expect((await s.req('GET', `${PODS}/a`)).status).toBe(404);
  });

  it('Warn, the default, creates without the unknown fields and warns of each', async () => {
    for (const q of ['?fieldValidation=Warn', '']) {
      const name = `w${q.length}`;
      const r = await s.req('POST', `${PODS}${q}`, pod(name));
      expect(r.status).toBe(201);
      expect(r.headers.warning).toBe('299 - "unknown field \\"metadata.unknownMeta\\"", ' +
        '299 - "unknown field \\"spec.bogusSpec\\""');
      const got = (await s.req('GET', `${PODS}/${name}`)).body;
      expect(got.metadata.unknownMeta).toBeUndefined();
      expect(got.spec.bogusSpec).toBeUndefined();
      expect(got.spec.containers[0].name).toBe('c');
    }
  });

  it('Ignore creates without warnings; known fields, maps and raw objects are never unknown', async () => {
    const r = await s.req('POST', `${PODS}?fieldValidation=Ignore`, pod('i'));
    expect(r.status).toBe(201);
    expect(r.headers.warning).toBeUndefined();
    expect(r.body.spec.bogusSpec).toBeUndefined();
    const ok = await s.req('POST', '/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict',
      { ...deployment('d1'), metadata: { name: 'd1', labels: { 'any/key': 'v' },
        annotations: { a: 'b' } } });
    expect(ok.status).toBe(201);
    expect(ok.headers.warning).toBeUndefined();
  });

  it('a value of the wrong type is reported before an unknown field, as upstream decodes', async () => {
    const r = await s.req('POST', `${PODS}?fieldValidation=Strict`,
      { ...pod('t'), spec: { containers: [{ name: 'c', image: 'x' }], bogus: 1,
        terminationGracePeriodSeconds: 'soon' } });
    expect(r.status).toBe(400);
    expect(r.body.message).not.toContain('strict decoding error');
  });

  it('merge and strategic patches: unknown fields sorted, directives are not fields', async () => {
    await s.req('POST', `${PODS}?fieldValidation=Ignore`, pod('p'));
    const patch = { spec: { zzz: 1, containers: [{ name: 'c', unknownNested: 2 }],
      $setElementOrder: undefined, '$setElementOrder/containers': [{ name: 'c' }] } };
    const smp = await s.req('PATCH', `${PODS}/p?fieldValidation=Strict`, patch,
      { 'content-type': 'application/strategic-merge-patch+json' });
    expect(smp.status).toBe(400);
    expect(smp.body.message).toBe('strict decoding error: ' +
      'unknown field "spec.containers[0].unknownNested", unknown field "spec.zzz"');
    const merge = await s.req('PATCH', `${PODS}/p`, { metadata: { labels: { a: 'b' }, nope: 1 } },
      { 'content-type': 'application/merge-patch+json' });
    expect(merge.status).toBe(200);
    expect(merge.headers.warning).toBe('299 - "unknown field \\"metadata.nope\\""');
    expect(merge.body.metadata).toMatchObject({ labels: { a: 'b' } });
    expect(merge.body.metadata.nope).toBeUndefined();
    const smpWarn = await s.req('PATCH', `${PODS}/p`, { spec: { containers: [{ name: 'c',
      extra: 1 }], '$setElementOrder/containers': [{ name: 'c' }] } },
    { 'content-type': 'application/strategic-merge-patch+json' });
    expect(smpWarn.status).toBe(200);
    expect(smpWarn.body.spec.containers[0].extra).toBeUndefined();
    const deleting = await s.req('PATCH', `${PODS}/p?fieldValidation=Strict`,
      { metadata: { gone: null } }, { 'content-type': 'application/merge-patch+json' });
    expect(deleting.status).toBe(200);
  });

  it('a status update is checked against its kind; other subresources are not', async () => {
    const cur = (await s.req('GET', `${PODS}/i`)).body;
    const r = await s.req('PUT', `${PODS}/i/status?fieldValidation=Strict`,
      { ...cur, status: { ...cur.status, nope: true } });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('unknown field "status.nope"');
  });
});
