import { describe, expect, it } from 'vitest';
import {
  bootstrapRbacObjects, buildAuthorizer, evaluateAccessReview, userFromSpec,
} from '../../../src/apiserver/authz/index.js';
import type { UserInfo } from '../../../src/apiserver/pipeline-types.js';
import { isKdpError } from '../../../src/errors.js';
import { memorySource } from './rbac-source.js';

const authz = buildAuthorizer({ mode: 'RBAC', source: memorySource(bootstrapRbacObjects()) });
const jane: UserInfo = { name: 'jane', groups: ['system:authenticated'] };
const admin: UserInfo = { name: 'kubernetes-admin', groups: ['system:masters'] };

describe('evaluateAccessReview', () => {
  it('an admin can create deployments (as `kubectl auth can-i create deployments`)', async () => {
    const status = await evaluateAccessReview(authz, admin, { resourceAttributes: {
      namespace: 'default', verb: 'create', group: 'apps', resource: 'deployments' } });
    expect(status).toEqual({ allowed: true });
  });

  it('a user without bindings is not allowed, with no reason', async () => {
    const status = await evaluateAccessReview(authz, jane, { resourceAttributes: {
      namespace: 'default', verb: 'list', resource: 'pods' } });
    expect(status).toEqual({ allowed: false });
  });

  it('non-resource attributes are checked against nonResourceURLs', async () => {
    const status = await evaluateAccessReview(authz, jane, { nonResourceAttributes: {
      path: '/openapi/v3', verb: 'get' } });
    expect(status.allowed).toBe(true);
    expect(status.reason).toContain('ClusterRole "system:discovery"');
    const denied = await evaluateAccessReview(authz, jane, { nonResourceAttributes: {
      path: '/metrics', verb: 'get' } });
    expect(denied.allowed).toBe(false);
  });

  it('a spec with neither attribute kind is 422 Invalid naming spec.resourceAttributes',
    async () => {
      const err = await evaluateAccessReview(authz, jane, {}).catch((e: unknown) => e);
      expect(isKdpError(err, 'KDP_INVALID')).toBe(true);
      expect((err as Error).message).toContain('exactly one of nonResourceAttributes or ' +
        'resourceAttributes must be specified');
      expect((err as { details: { causes: Array<{ field: string }> } }).details.causes[0]?.field)
        .toBe('spec.resourceAttributes');
    });

  it('a SubjectAccessReview evaluates the user the spec names', async () => {
    const spec = { user: 'x', groups: ['system:masters'], resourceAttributes: { verb: 'delete',
      resource: 'nodes' } };
    const status = await evaluateAccessReview(authz, userFromSpec(spec), spec,
      'SubjectAccessReview');
    expect(status.allowed).toBe(true);
  });

  it('an authorizer failure becomes evaluationError', async () => {
    const failing = { authorize: async () => { throw new Error('store down'); } };
    const status = await evaluateAccessReview(failing, jane, { resourceAttributes: {
      verb: 'get', resource: 'pods' } });
    expect(status).toEqual({ allowed: false, evaluationError: 'store down' });
  });
});
