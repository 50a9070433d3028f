import { describe, expect, it } from 'vitest';
import {
  bootstrapRbacObjects, buildAuthorizer, forbiddenError,
} from '../../../src/apiserver/authz/index.js';
import type { AuthzAttributes, UserInfo } from '../../../src/apiserver/pipeline-types.js';
import type { KubeObject } from '../../../src/client/types.js';
import { memorySource } from './rbac-source.js';

const jane: UserInfo = { name: 'jane', groups: ['dev', 'system:authenticated'] };

function res(user: UserInfo, verb: string, resource: string,
  more: Partial<AuthzAttributes> = {}): AuthzAttributes {
  return { user, verb, resourceRequest: true, apiGroup: '', resource, ...more };
}

function role(name: string, namespace: string | undefined, rules: unknown[]): KubeObject {
  return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: namespace ? 'Role' : 'ClusterRole',
    metadata: { name, ...(namespace ? { namespace } : {}) }, rules };
}

function bind(name: string, namespace: string | undefined, roleKind: string, roleName: string,
  subjects: unknown[]): KubeObject {
  return { apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: namespace ? 'RoleBinding' : 'ClusterRoleBinding',
    metadata: { name, ...(namespace ? { namespace } : {}) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName }, subjects };
}

const podReader = role('pod-reader', 'team', [
  { apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list'] },
]);

describe('RBAC authorizer', () => {
  it('a RoleBinding grants its Role only in its namespace', async () => {
    const authz = buildAuthorizer({ mode: 'RBAC', source: memorySource([
      podReader, bind('read', 'team', 'Role', 'pod-reader', [{ kind: 'User', name: 'jane' }]),
    ]) });
    const ok = await authz.authorize(res(jane, 'list', 'pods', { namespace: 'team' }));
    expect(ok).toEqual({ allowed: true, reason:
      'RBAC: allowed by RoleBinding "read/team" of Role "pod-reader" to User "jane"' });
    expect((await authz.authorize(res(jane, 'list', 'pods', { namespace: 'other' }))).allowed)
      .toBe(false);
    expect((await authz.authorize(res(jane, 'list', 'pods'))).allowed).toBe(false);
    expect((await authz.authorize(res(jane, 'delete', 'pods', { namespace: 'team' }))).allowed)
      .toBe(false);
  });

  it('a RoleBinding to a ClusterRole grants its rules in that namespace only', async () => {
    const authz = buildAuthorizer({ mode: 'RBAC', source: memorySource([
      role('secret-reader', undefined, [{ apiGroups: [''], resources: ['secrets'],
        verbs: ['get'] }]),
      bind('rs', 'team', 'ClusterRole', 'secret-reader', [{ kind: 'Group', name: 'dev' }]),
    ]) });
    expect((await authz.authorize(res(jane, 'get', 'secrets', { namespace: 'team' }))).allowed)
      .toBe(true);
    expect((await authz.authorize(res(jane, 'get', 'secrets', { namespace: 'x' }))).allowed)
      .toBe(false);
  });

  it('subresources match `resource/subresource` and `*/subresource` only', async () => {
    const authz = buildAuthorizer({ mode: 'RBAC', source: memorySource([
      role('r', undefined, [
        { apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['update'] },
        { apiGroups: ['*'], resources: ['*/status'], verbs: ['get'] },
      ]),
      bind('b', undefined, 'ClusterRole', 'r', [{ kind: 'User', name: 'jane' }]),
    ]) });
    const apps = { apiGroup: 'apps', namespace: 'd' };
    expect((await authz.authorize(res(jane, 'update', 'deployments',
      { ...apps, subresource: 'scale' }))).allowed).toBe(true);
    expect((await authz.authorize(res(jane, 'update', 'deployments', apps))).allowed).toBe(false);
    expect((await authz.authorize(res(jane, 'get', 'pods',
      { subresource: 'status', namespace: 'd' }))).allowed).toBe(true);
    expect((await authz.authorize(res(jane, 'get', 'pods', { namespace: 'd' }))).allowed)
      .toBe(false);
  });

  it('resourceNames restrict a rule to the named objects', async () => {
    const authz = buildAuthorizer({ mode: 'RBAC', source: memorySource([
      role('one-cm', 'team', [{ apiGroups: [''], resources: ['configmaps'],
        resourceNames: ['app-config'], verbs: ['get', 'update'] }]),
      bind('b', 'team', 'Role', 'one-cm', [{ kind: 'User', name: 'jane' }]),
    ]) });
    const at = { namespace: 'team' };
    expect((await authz.authorize(res(jane, 'get', 'configmaps', { ...at, name: 'app-config' })))
      .allowed).toBe(true);
    expect((await authz.authorize(res(jane, 'get', 'configmaps', { ...at, name: 'other' })))
      .allowed).toBe(false);
    expect((await authz.authorize(res(jane, 'list', 'configmaps', at))).allowed).toBe(false);
  });

  it('nonResourceURLs match exactly or by a trailing `*` prefix', async () => {
    const authz = buildAuthorizer({ mode: 'RBAC', source: memorySource([
      role('urls', undefined, [{ nonResourceURLs: ['/healthz', '/apis/*'], verbs: ['get'] }]),
      bind('b', undefined, 'ClusterRole', 'urls', [{ kind: 'User', name: 'jane' }]),
    ]) });
    const path = (p: string, verb = 'get') =>
      authz.authorize({ user: jane, verb, resourceRequest: false, path: p });
    expect((await path('/healthz')).allowed).toBe(true);
    expect((await path('/healthz/etcd')).allowed).toBe(false);
    expect((await path('/apis/apps/v1')).allowed).toBe(true);
    expect((await path('/apis')).allowed).toBe(false);
    expect((await path('/healthz', 'post')).allowed).toBe(false);
  });

  it('ServiceAccount subjects match system:serviceaccount:<ns>:<name>, ns from the binding',
    async () => {
      const authz = buildAuthorizer({ mode: 'RBAC', source: memorySource([
        podReader,
        bind('sa', 'team', 'Role', 'pod-reader', [{ kind: 'ServiceAccount', name: 'bot' }]),
      ]) });
      const bot: UserInfo = { name: 'system:serviceaccount:team:bot', groups: [] };
      const other: UserInfo = { name: 'system:serviceaccount:other:bot', groups: [] };
      const d = await authz.authorize(res(bot, 'get', 'pods', { namespace: 'team' }));
      expect(d.reason).toBe(
        'RBAC: allowed by RoleBinding "sa/team" of Role "pod-reader" to ServiceAccount "bot/team"');
      expect((await authz.authorize(res(other, 'get', 'pods', { namespace: 'team' }))).allowed)
        .toBe(false);
    });

  it('a binding to a missing role denies with upstream\'s not-found reason', async () => {
    const authz = buildAuthorizer({ mode: 'RBAC', source: memorySource([
      bind('b', undefined, 'ClusterRole', 'ghost', [{ kind: 'User', name: 'jane' }]),
    ]) });
    expect(await authz.authorize(res(jane, 'get', 'pods', { namespace: 'x' }))).toEqual({
      allowed: false, reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "ghost" not found',
    });
  });

  it('system:masters is allowed everything without reading RBAC objects', async () => {
    const src = memorySource([]);
    const authz = buildAuthorizer({ mode: 'RBAC', source: src });
    const admin: UserInfo = { name: 'kubernetes-admin', groups: ['system:masters'] };
    expect((await authz.authorize(res(admin, 'delete', 'nodes'))).allowed).toBe(true);
    expect(src.calls).toBe(0);
  });

  it('AlwaysAllow allows anyone', async () => {
    const authz = buildAuthorizer({ mode: 'AlwaysAllow' });
    expect((await authz.authorize(res(jane, 'delete', 'nodes'))).allowed).toBe(true);
  });
});

describe('forbiddenError', () => {
  it('words a namespaced denial as upstream', () => {
    const e = forbiddenError(res(jane, 'list', 'pods', { namespace: 'default' }),
      { allowed: false, reason: '' });
    expect(e.code).toBe('KDP_FORBIDDEN');
    expect(e.message).toBe('pods is forbidden: User "jane" cannot list resource "pods" in API ' +
      'group "" in the namespace "default"');
  });

  it('words a named cluster-scoped denial in a group, with the reason appended', () => {
    const e = forbiddenError(res(jane, 'get', 'deployments', { apiGroup: 'apps', name: 'web',
      subresource: 'scale' }), { allowed: false, reason: 'RBAC: x' });
    expect(e.message).toBe('deployments.apps "web" is forbidden: User "jane" cannot get ' +
      'resource "deployments/scale" in API group "apps" at the cluster scope: RBAC: x');
  });

  it('words a non-resource denial as upstream', () => {
    const e = forbiddenError({ user: jane, verb: 'get', resourceRequest: false, path: '/metrics' },
      { allowed: false, reason: '' });
    expect(e.message).toBe('forbidden: User "jane" cannot get path "/metrics"');
  });
});

describe('bootstrap policy', () => {
  const authz = buildAuthorizer({ mode: 'RBAC', source: memorySource(bootstrapRbacObjects()) });
  const anon: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
  const node: UserInfo = { name: 'system:node:n1', groups: ['system:nodes',
    'system:authenticated'] };

  it('authenticated users may discover the API and create SelfSubjectAccessReviews', async () => {
    const d = await authz.authorize({ user: jane, verb: 'get', resourceRequest: false,
      path: '/apis/apps/v1' });
    expect(d.allowed).toBe(true);
    const ssar = await authz.authorize(res(jane, 'create', 'selfsubjectaccessreviews',
      { apiGroup: 'authorization.k8s.io' }));
    expect(ssar.reason).toBe('RBAC: allowed by ClusterRoleBinding "system:basic-user" of ' +
      'ClusterRole "system:basic-user" to Group "system:authenticated"');
  });

  it('anonymous users may read /healthz and /version but not discovery', async () => {
    const get = (path: string) => authz.authorize({ user: anon, verb: 'get',
      resourceRequest: false, path });
    expect((await get('/healthz')).allowed).toBe(true);
    expect((await get('/version')).allowed).toBe(true);
    expect((await get('/api')).allowed).toBe(false);
  });

  it('RBAC alone grants a node nothing (system:node is bound to no one, as upstream)',
    async () => {
      expect((await authz.authorize(res(node, 'patch', 'nodes', { subresource: 'status',
        name: 'n1' }))).allowed).toBe(false);
      expect((await authz.authorize(res(node, 'get', 'secrets', { namespace: 'default',
        name: 's' }))).allowed).toBe(false);
    });

  it('kube-proxy\'s ServiceAccount (kubeadm:node-proxier) watches Services and slices',
    async () => {
      const proxy: UserInfo = { name: 'system:serviceaccount:kube-system:kube-proxy',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system',
          'system:authenticated'] };
      expect((await authz.authorize(res(proxy, 'watch', 'endpointslices',
        { apiGroup: 'discovery.k8s.io' }))).allowed).toBe(true);
      expect((await authz.authorize(res(proxy, 'list', 'services'))).allowed).toBe(true);
      expect((await authz.authorize(res(proxy, 'delete', 'services', { namespace: 'default' })))
        .allowed).toBe(false);
    });

  it('the scheduler may bind pods', async () => {
    const sched: UserInfo = { name: 'system:kube-scheduler', groups: ['system:authenticated'] };
    expect((await authz.authorize(res(sched, 'create', 'pods', { subresource: 'binding',
      namespace: 'default' }))).allowed).toBe(true);
  });

  it('view, edit and admin aggregate as upstream: edit includes view, admin includes edit',
    async () => {
      const objs = [...bootstrapRbacObjects(),
        bind('v', 'team', 'ClusterRole', 'view', [{ kind: 'User', name: 'viewer' }]),
        bind('e', 'team', 'ClusterRole', 'edit', [{ kind: 'User', name: 'editor' }]),
        bind('a', 'team', 'ClusterRole', 'admin', [{ kind: 'User', name: 'owner' }])];
      const z = buildAuthorizer({ mode: 'RBAC', source: memorySource(objs) });
      const u = (name: string): UserInfo => ({ name, groups: ['system:authenticated'] });
      const can = async (who: string, verb: string, resource: string, apiGroup = '') =>
        (await z.authorize(res(u(who), verb, resource, { namespace: 'team', apiGroup }))).allowed;
      expect(await can('viewer', 'list', 'deployments', 'apps')).toBe(true);
      expect(await can('viewer', 'get', 'secrets')).toBe(false);
      expect(await can('viewer', 'create', 'pods')).toBe(false);
      expect(await can('editor', 'create', 'deployments', 'apps')).toBe(true);
      expect(await can('editor', 'list', 'services')).toBe(true);
      expect(await can('editor', 'create', 'rolebindings', 'rbac.authorization.k8s.io'))
        .toBe(false);
      expect(await can('owner', 'create', 'rolebindings', 'rbac.authorization.k8s.io'))
        .toBe(true);
      expect(await can('owner', 'delete', 'pods')).toBe(true);
    });
});
