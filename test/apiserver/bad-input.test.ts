import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestServer, deployment } from './helpers/server.js';
import type { TestServer } from './helpers/server.js';

const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';

describe('bad input always gets a Status, never a crash', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await buildTestServer();
    await s.req('POST', DEPLOYS, deployment('web'));
  });
  afterAll(async () => { await s.done(); });

  const cases: Array<[string, () => Promise<{ status: number; body: any }>, number, string]> = [
    ['malformed JSON', () => s.req('POST', DEPLOYS, '{"metadata":', {}), 400, 'BadRequest'],
    ['malformed YAML apply patch', () => s.req('PATCH', `${DEPLOYS}/web?fieldManager=m`,
      'a: [b', { 'content-type': 'application/apply-patch+yaml' }), 400, 'BadRequest'],
    ['unknown resource', () => s.req('GET', '/apis/apps/v1/namespaces/default/widgets'), 404,
      'NotFound'],
    ['unknown group', () => s.req('GET', '/apis/nosuch.io/v1/things'), 404, 'NotFound'],
    ['body over 3 MiB', () => s.req('POST', '/api/v1/namespaces/default/configmaps',
      JSON.stringify({ metadata: { name: 'big' }, data: { a: 'x'.repeat(3 * 1024 * 1024 + 10) } })),
    413, 'RequestEntityTooLarge'],
    ['unsupported media type', () => s.req('POST', DEPLOYS, 'x', { 'content-type': 'text/csv' }),
      415, 'UnsupportedMediaType'],
    ['unsupported patch type', () => s.req('PATCH', `${DEPLOYS}/web`, '{}',
      { 'content-type': 'application/json' }), 415, 'UnsupportedMediaType'],
    ['json patch that is not a list', () => s.req('PATCH', `${DEPLOYS}/web`, '{}',
      { 'content-type': 'application/json-patch+json' }), 400, 'BadRequest'],
    ['body that is not an object', () => s.req('POST', DEPLOYS, '[1,2]'), 400, 'BadRequest'],
    ['wrong kind for the URL', () => s.req('POST', DEPLOYS, { kind: 'Pod', apiVersion: 'v1',
      metadata: { name: 'x' } }), 400, 'BadRequest'],
    ['malformed label selector', () => s.req('GET', `${DEPLOYS}?labelSelector=a%20in%20(`), 400,
      'BadRequest'],
    ['bad resourceVersion on watch', () => s.req('GET', `${DEPLOYS}?watch=1&resourceVersion=abc`),
      400, 'BadRequest'],
    // Upstream's ValidatePatchOptions: 422 PatchOptions "fieldManager: Required value".
    ['apply without fieldManager', () => s.req('PATCH', `${DEPLOYS}/web`, '{}',
      { 'content-type': 'application/apply-patch+yaml' }), 422, 'Invalid'],
    ['labels that are not a string map', () => s.req('POST',
      '/api/v1/namespaces/default/configmaps', { metadata: { name: 'x', labels: 'bad' } }), 400,
    'BadRequest'],
    ['a list field of the wrong shape', () => s.req('POST', '/api/v1/namespaces/default/pods',
      { metadata: { name: 'p' }, spec: { containers: 'x' } }), 400, 'BadRequest'],
    ['a patch that makes metadata a string', () => s.req('PATCH', `${DEPLOYS}/web`,
      { metadata: 'x' }, { 'content-type': 'application/merge-patch+json' }), 400, 'BadRequest'],
    ['a malformed URL', () => s.req('GET', '/api/%ZZ'), 400, 'BadRequest'],
    ['a verb the resource does not serve', () => s.req('GET',
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'), 405, 'MethodNotAllowed'],
    ['protobuf garbage', () => s.req('POST', DEPLOYS, Buffer.from([1, 2, 3, 4, 5]),
      { 'content-type': 'application/vnd.kubernetes.protobuf' }), 400, 'BadRequest'],
  ];
  for (const [name, run, code, reason] of cases) {
    it(`${name} → ${code} ${reason}`, async () => {
      const r = await run();
      expect(r.status).toBe(code);
      expect(r.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code,
        reason });
    });
  }

  it('an invalid object is 422 Invalid listing every cause', async () => {
    const bad = deployment('Bad_Name');
    (bad.spec as any).replicas = -1;
    (bad.spec.template.spec.containers[0] as any).image = '';
    const r = await s.req('POST', DEPLOYS, bad);
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    expect(r.body.details.kind).toBe('Deployment');
    const fields = r.body.details.causes.map((c: any) => c.field);
    expect(fields).toEqual(expect.arrayContaining(['metadata.name', 'spec.replicas',
      'spec.template.spec.containers[0].image']));
    expect(r.body.message).toMatch(/^Deployment\.apps "Bad_Name" is invalid: \[/);
  });

  it('a body without a Content-Type is parsed as JSON (scale --current-replicas)', async () => {
    const cur = await s.req('GET', `${DEPLOYS}/web/scale`);
    const res = await s.app.inject({ method: 'PUT', url: `${DEPLOYS}/web/scale`,
      payload: Buffer.from(JSON.stringify({ ...cur.body, spec: { replicas: 3 } })) });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body).spec.replicas).toBe(3);
  });

  it('the server still answers after all of the above', async () => {
    expect((await s.req('GET', '/healthz')).text).toBe('ok');
  });
});
