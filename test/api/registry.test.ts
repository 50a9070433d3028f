import { describe, expect, it } from 'vitest';
import { apiVersionOf, buildRegistry, parseApiVersion } from '../../src/api/registry.js';

const reg = buildRegistry();

describe('resource registry', () => {
  it('finds resources by group, version and plural', () => {
    const d = reg.byResource('apps', 'v1', 'deployments');
    expect(d?.kind).toBe('Deployment');
    expect(d?.listKind).toBe('DeploymentList');
    expect(d?.namespaced).toBe(true);
    expect(d?.subresources.map((s) => s.name)).toEqual(['scale', 'status']);
    expect(reg.byResource('', 'v1', 'deployments')).toBeUndefined();
  });
  it('finds resources by apiVersion and kind', () => {
    expect(reg.byKind('discovery.k8s.io/v1', 'EndpointSlice')?.resource).toBe('endpointslices');
    expect(reg.byKind('v1', 'ServiceCIDR')).toBeUndefined();
    expect(reg.byKind('networking.k8s.io/v1', 'ServiceCIDR')?.namespaced).toBe(false);
  });
  it('resolves short names, singulars and group-qualified names as kubectl does', () => {
    expect(reg.byShortName('po')?.resource).toBe('pods');
    for (const [n, r] of [['svc', 'services'], ['deploy', 'deployments'], ['rs', 'replicasets'],
      ['ns', 'namespaces'], ['no', 'nodes'], ['ep', 'endpoints'], ['cm', 'configmaps'],
      ['sa', 'serviceaccounts'], ['ds', 'daemonsets'], ['ev', 'events'], ['pod', 'pods'],
      ['Service', 'services'], ['deploy.apps', 'deployments'], ['deployments.v1.apps',
        'deployments'],
      ['endpointslices.discovery', 'endpointslices'], ['job', 'jobs']] as const) {
      expect(reg.resolve(n)?.resource, n).toBe(r);
    }
    expect(reg.resolve('widgets')).toBeUndefined();
    expect(reg.resolve('pods.apps')).toBeUndefined();
  });
  it('lists the `all` category like upstream', () => {
    expect(reg.inCategory('all').map((r) => r.resource).sort())
      .toEqual(['cronjobs', 'daemonsets', 'deployments', 'jobs', 'pods', 'replicasets', 'services', 'statefulsets']);
  });
  it('groups versions in discovery order with core first', () => {
    const g = reg.groups();
    expect(g[0]).toEqual({ group: '', versions: ['v1'] });
    expect(g.map((x) => x.group)).toContain('rbac.authorization.k8s.io');
  });
  it('converts apiVersion strings both ways', () => {
    expect(parseApiVersion('apps/v1')).toEqual({ group: 'apps', version: 'v1' });
    expect(parseApiVersion('v1')).toEqual({ group: '', version: 'v1' });
    expect(apiVersionOf({ group: '', version: 'v1' })).toBe('v1');
    expect(apiVersionOf({ group: 'batch', version: 'v1' })).toBe('batch/v1');
  });
  it('gives pods the binding, eviction, log and status subresources', () => {
    const pods = reg.byResource('', 'v1', 'pods')!;
    expect(pods.subresources.find((s) => s.name === 'binding')?.verbs).toEqual(['create']);
    expect(pods.subresources.find((s) => s.name === 'status')?.verbs)
      .toEqual(['get', 'patch', 'update']);
    expect(pods.verbs).toContain('deletecollection');
  });
});

describe('registry and validation stay in step', () => {
  it('has validation for every built-in kind', async () => {
    const { hasValidation } = await import('../../src/api/validation/index.js');
    const missing = reg.all().filter((r) => !hasValidation(apiVersionOf(r), r.kind));
    expect(missing.map((r) => r.kind)).toEqual([]);
  });
});
