import { describe, expect, it } from 'vitest';
import { errorFromResponse } from '../../src/client/http-errors.js';
import { queryString, resourcePath } from '../../src/client/http-paths.js';

describe('REST paths', () => {
  it('builds core, group, namespaced, cluster-scoped and subresource paths', () => {
    expect(resourcePath({ group: '', version: 'v1', resource: 'pods', namespace: 'a' }, 'p',
      'status')).toBe('/api/v1/namespaces/a/pods/p/status');
    expect(resourcePath({ group: 'apps', version: 'v1', resource: 'deployments',
      namespace: 'a' })).toBe('/apis/apps/v1/namespaces/a/deployments');
    expect(resourcePath({ group: '', version: 'v1', resource: 'nodes' }, 'n1'))
      .toBe('/api/v1/nodes/n1');
    expect(resourcePath({ group: 'discovery.k8s.io', version: 'v1',
      resource: 'endpointslices' })).toBe('/apis/discovery.k8s.io/v1/endpointslices');
  });

  it('escapes names and skips empty query values', () => {
    expect(resourcePath({ group: '', version: 'v1', resource: 'configmaps', namespace: 'a' },
      'x y')).toBe('/api/v1/namespaces/a/configmaps/x%20y');
    expect(queryString({ labelSelector: 'app in (a,b)', limit: undefined, continue: '',
      resourceVersion: '0' })).toBe('?labelSelector=app%20in%20(a%2Cb)&resourceVersion=0');
    expect(queryString({})).toBe('');
  });
});

describe('errors from Status bodies', () => {
  it('uses the Status reason, message and details (causes included)', () => {
    const e = errorFromResponse(422, JSON.stringify({ kind: 'Status', apiVersion: 'v1',
      status: 'Failure', code: 422, reason: 'Invalid',
      message: 'Service "s" is invalid: spec.ports[0].port: Required value',
      details: { name: 's', kind: 'Service', causes: [{ reason: 'FieldValueRequired',
        message: 'Required value', field: 'spec.ports[0].port' }] } }));
    expect(e.code).toBe('KDP_INVALID');
    expect(e.message).toBe('Service "s" is invalid: spec.ports[0].port: Required value');
    expect(e.details).toEqual({ name: 's', kind: 'Service', causes: [{
      field: 'spec.ports[0].port', reason: 'FieldValueRequired', message: 'Required value' }] });
  });

  it('maps Expired and Conflict reasons, and falls back to the HTTP status', () => {
    expect(errorFromResponse(410, '{"reason":"Expired","message":"x"}').code).toBe('KDP_GONE');
    expect(errorFromResponse(409, '{"reason":"Conflict","message":"x"}').code)
      .toBe('KDP_CONFLICT');
    expect(errorFromResponse(409, '{"reason":"AlreadyExists","message":"x"}').code)
      .toBe('KDP_ALREADY_EXISTS');
    expect(errorFromResponse(404, 'page not found').code).toBe('KDP_NOT_FOUND');
    expect(errorFromResponse(404, 'page not found').message).toBe('page not found');
    expect(errorFromResponse(502, '').code).toBe('KDP_INTERNAL');
  });
});
