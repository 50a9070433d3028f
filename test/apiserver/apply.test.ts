import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestServer, deployment } from './helpers/server.js';
import type { TestServer } from './helpers/server.js';

const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

describe('server-side apply', () => {
  let s: TestServer;
  beforeEach(async () => { s = await buildTestServer(); });
  afterEach(async () => { await s.done(); });

  it('creates a missing object with 201 and records an Apply manager', async () => {
    const r = await s.req('PATCH', `${DEPLOYS}/web?fieldManager=kubectl`, deployment('web'), APPLY);
    expect(r.status).toBe(201);
    const mf = r.body.metadata.managedFields;
    expect(mf).toHaveLength(1);
    expect(mf[0]).toMatchObject({ manager: 'kubectl', operation: 'Apply', apiVersion: 'apps/v1',
      fieldsType: 'FieldsV1' });
    expect(mf[0].fieldsV1['f:spec']['f:replicas']).toEqual({});
    expect(mf[0].fieldsV1['f:spec']['f:template']['f:spec']['f:containers'])
      .toHaveProperty(['k:{"name":"web"}', 'f:image']);
  });

  it('accepts real YAML bodies', async () => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: "1"\n';
    const r = await s.req('PATCH', '/api/v1/namespaces/default/configmaps/c?fieldManager=m', yaml,
      APPLY);
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({ a: '1' });
  });

  it('a field another manager set differently is a 409 conflict unless forced', async () => {
    await s.req('POST', `${DEPLOYS}?fieldManager=kubectl-create`, deployment('web'));
    const want = deployment('web', { replicas: 3 });
    const r = await s.req('PATCH', `${DEPLOYS}/web?fieldManager=kubectl&force=false`, want, APPLY);
    expect(r.status).toBe(409);
    expect(r.body.reason).toBe('Conflict');
    expect(r.body.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-create" ' +
      'using apps/v1: .spec.replicas');
    expect(r.body.details.causes).toEqual([{ reason: 'FieldManagerConflict',
      message: 'conflict with "kubectl-create" using apps/v1', field: '.spec.replicas' }]);
    const f = await s.req('PATCH', `${DEPLOYS}/web?fieldManager=kubectl&force=true`, want, APPLY);
    expect(f.status).toBe(200);
    expect(f.body.spec.replicas).toBe(3);
    const create = f.body.metadata.managedFields.find((m: any) => m.manager === 'kubectl-create');
    expect(create.fieldsV1['f:spec']['f:replicas']).toBeUndefined();
  });

  it('applying the same value another manager set is not a conflict', async () => {
    await s.req('POST', `${DEPLOYS}?fieldManager=kubectl-create`, deployment('web'));
    const r = await s.req('PATCH', `${DEPLOYS}/web?fieldManager=kubectl`, deployment('web'), APPLY);
    expect(r.status).toBe(200);
  });

  it('fields the manager stops applying are removed; others are kept', async () => {
    const first = deployment('web');
    (first.metadata.labels as any).tier = 'fe';
    await s.req('PATCH', `${DEPLOYS}/web?fieldManager=a`, first, APPLY);
    await s.req('PATCH', `${DEPLOYS}/web`, { metadata: { labels: { other: 'x' } } },
      { 'content-type': 'application/merge-patch+json' });
    const r = await s.req('PATCH', `${DEPLOYS}/web?fieldManager=a`, deployment('web'), APPLY);
    expect(r.status).toBe(200);
    expect(r.body.metadata.labels).toEqual({ app: 'web', other: 'x' });
  });

  it('an update records the changed fields for its manager', async () => {
    await s.req('POST', `${DEPLOYS}?fieldManager=kubectl-create`, deployment('web'));
    const r = await s.req('PATCH', `${DEPLOYS}/web?fieldManager=kubectl-label`,
      { metadata: { labels: { x: 'y' } } }, { 'content-type': 'application/merge-patch+json' });
    const label = r.body.metadata.managedFields.find((m: any) => m.manager === 'kubectl-label');
    expect(label).toMatchObject({ operation: 'Update',
      fieldsV1: { 'f:metadata': { 'f:labels': { 'f:x': {} } } } });
  });
});
