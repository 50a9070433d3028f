import { afterEach, describe, expect, it } from 'vitest';
import { buildAuthorizer } from '../../src/apiserver/authz/index.js';
import { buildTestServer } from './helpers/server.js';
import type { TestServer } from './helpers/server.js';

const SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview',
  spec: { resourceAttributes: { namespace: 'default', verb: 'create', resource: 'pods' } } };

describe('access reviews (kubectl auth can-i)', () => {
  let s: TestServer | undefined;
  afterEach(async () => { await s?.done(); });

  it('answers allowed for the requester under AlwaysAllow and is never stored', async () => {
    s = await buildTestServer();
    const r = await s.req('POST', SSAR, review);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ kind: 'SelfSubjectAccessReview', status: { allowed: true } });
    expect((await s.req('GET', SSAR)).status).toBe(405);
  });

  it('answers not allowed when RBAC grants nothing', async () => {
    s = await buildTestServer({ authorizer: buildAuthorizer({ mode: 'RBAC',
      source: { list: async () => [] } }) });
    const sar = { ...review, kind: 'SubjectAccessReview',
      spec: { ...review.spec, user: 'jane', groups: ['system:authenticated'] } };
    const r = await s.req('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', sar);
    expect(r.status).toBe(201);
    expect(r.body.status.allowed).toBe(false);
  });

  it('a review with neither attribute kind is 422', async () => {
    s = await buildTestServer();
    const r = await s.req('POST', SSAR, { ...review, spec: {} });
    expect(r.status).toBe(422);
  });
});
