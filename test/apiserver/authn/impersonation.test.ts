import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAuthorizer } from '../../../src/apiserver/authz/index.js';
import { memorySource } from '../authz/rbac-source.js';
import { kubectlMissing } from '../helpers/kubectl.js';
import { buildTestServer } from '../helpers/server.js';
import { startAuthHarness, type AuthHarness, type Identity } from './auth-harness.js';

// Impersonation over HTTPS through the production path (fast lane and Fastify), with the real
// kubectl's --as/--as-group/--as-uid: allowed values switch the user, refused ones answer
// upstream's 403, and groups without a user upstream's 500.
let h: AuthHarness;
let jane: Identity;
let bob: Identity;

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

beforeAll(async () => {
  h = await startAuthHarness();
  jane = await h.identity('jane', ['dev']);
  bob = await h.identity('bob');
  const created = [
    await h.req(h.admin, 'POST', `${RBAC}/clusterroles`, {
      metadata: { name: 'impersonator' },
      rules: [
        { verbs: ['impersonate'], apiGroups: [''], resources: ['users'],
          resourceNames: ['nobody'] },
        { verbs: ['impersonate'], apiGroups: [''], resources: ['groups'],
          resourceNames: ['team'] },
        { verbs: ['impersonate'], apiGroups: ['authentication.k8s.io'],
          resources: ['userextras/scopes', 'uids'] },
      ],
    }),
    await h.req(h.admin, 'POST', `${RBAC}/clusterrolebindings`, {
      metadata: { name: 'jane-impersonates' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole',
        name: 'impersonator' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'jane' }],
    }),
    // `nobody` may read pods in default (and nothing else); group `team` may read secrets.
    await h.req(h.admin, 'POST', `${RBAC}/namespaces/default/rolebindings`, {
      metadata: { name: 'nobody-views' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'nobody' }],
    }),
    await h.req(h.admin, 'POST', `${RBAC}/namespaces/default/roles`, {
      metadata: { name: 'secret-reader' },
      rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets'] }],
    }),
    await h.req(h.admin, 'POST', `${RBAC}/namespaces/default/rolebindings`, {
      metadata: { name: 'team-reads-secrets' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secret-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'team' }],
    }),
  ];
  for (const c of created) expect(c.status, c.text).toBe(201);
}, 60_000);

afterAll(async () => { await h?.close(); });

describe('impersonation headers on raw HTTPS requests', () => {
  it('an allowed Impersonate-User runs the request as that user, not the caller', async () => {
    const asNobody = { 'impersonate-user': 'nobody' };
    const pods = await h.req(jane, 'GET', '/api/v1/namespaces/default/pods', undefined, asNobody);
    expect(pods.status, pods.text).toBe(200);
    // jane herself may not list pods; nobody may not list secrets.
    expect((await h.req(jane, 'GET', '/api/v1/namespaces/default/pods')).status).toBe(403);
    const secrets = await h.req(jane, 'GET', '/api/v1/namespaces/default/secrets', undefined,
      asNobody);
    expect(secrets.status).toBe(403);
    expect(secrets.body.message).toBe('secrets is forbidden: User "nobody" cannot list ' +
      'resource "secrets" in API group "" in the namespace "default"');
  });

  it('the admin (system:masters) impersonating a user gets only that user\'s rights', async () => {
    const r = await h.req(h.admin, 'GET', '/api/v1/namespaces/default/secrets', undefined,
      { 'impersonate-user': 'nobody' });
    expect(r.status).toBe(403);
    expect(r.body.reason).toBe('Forbidden');
  });

  it('a caller without the impersonate verb gets upstream\'s 403 naming the user', async () => {
    const r = await h.req(bob, 'GET', '/api/v1/namespaces/default/pods', undefined,
      { 'impersonate-user': 'nobody' });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403,
      details: { name: 'nobody', kind: 'users' } });
    expect(r.body.message).toBe('users "nobody" is forbidden: User "bob" cannot impersonate ' +
      'resource "users" in API group "" at the cluster scope');
  });

  it('a group the caller may not impersonate is refused, an allowed one is granted', async () => {
    const refused = await h.req(jane, 'GET', '/api/v1/namespaces/default/pods', undefined,
      { 'impersonate-user': 'nobody', 'impersonate-group': ['team', 'system:masters'] });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('groups "system:masters" is forbidden: User "jane" ' +
      'cannot impersonate resource "groups" in API group "" at the cluster scope');
    const granted = await h.req(jane, 'GET', '/api/v1/namespaces/default/secrets', undefined,
      { 'impersonate-user': 'nobody', 'impersonate-group': 'team' });
    expect(granted.status, granted.text).toBe(200);
  });

  it('extra keys and UIDs are checked on userextras/<key> and uids', async () => {
    const extra = await h.req(jane, 'GET', '/api/v1/namespaces/default/pods', undefined,
      { 'impersonate-user': 'nobody', 'impersonate-extra-reason': 'audit' });
    expect(extra.status).toBe(403);
    expect(extra.body.message).toBe('userextras.authentication.k8s.io "audit" is forbidden: ' +
      'User "jane" cannot impersonate resource "userextras/reason" in API group ' +
      '"authentication.k8s.io" at the cluster scope');
    const ok = await h.req(jane, 'GET', '/api/v1/namespaces/default/pods', undefined,
      { 'impersonate-user': 'nobody', 'impersonate-extra-scopes': 'view',
        'impersonate-uid': 'u-1' });
    expect(ok.status, ok.text).toBe(200);
    const uid = await h.req(bob, 'GET', '/api/v1/namespaces/default/pods', undefined,
      { 'impersonate-user': 'bob', 'impersonate-uid': 'u-1' });
    expect(uid.status).toBe(403);
    expect(uid.body.message).toMatch(/^users "bob" is forbidden: User "bob" cannot impersonate/);
  });

  it('groups without a user are refused before anything runs (upstream\'s 500)', async () => {
    const r = await h.req(h.admin, 'GET', '/api/v1/namespaces/default/pods', undefined,
      { 'impersonate-group': 'team' });
    expect(r.status).toBe(500);
    expect(r.body.reason).toBe('InternalError');
    expect(r.body.message).toBe('Internal Server Error: "/api/v1/namespaces/default/pods": ' +
      'requested [{Group  team    }] without impersonating a user');
  });

  it('the Fastify path (watch, non-resource URLs) impersonates as the fast lane does', async () => {
    const watch = await h.req(bob, 'GET', '/api/v1/namespaces/default/pods?watch=true',
      undefined, { 'impersonate-user': 'nobody' });
    expect(watch.status).toBe(403);
    expect(watch.body.message).toMatch(/^users "nobody" is forbidden: User "bob"/);
    const version = await h.req(bob, 'GET', '/version', undefined,
      { 'impersonate-user': 'nobody' });
    expect(version.status).toBe(403);
  });

  it('a write through impersonation is stored as the impersonated user would', async () => {
    const r = await h.req(h.admin, 'POST', '/api/v1/namespaces/default/configmaps',
      { metadata: { name: 'by-nobody' } }, { 'impersonate-user': 'nobody' });
    expect(r.status).toBe(403);
    expect(r.body.message).toMatch(/User "nobody" cannot create resource "configmaps"/);
    const get = await h.req(h.admin, 'GET', '/api/v1/namespaces/default/configmaps/by-nobody');
    expect(get.status).toBe(404);
  });
});

describe.skipIf(kubectlMissing(32))('kubectl --as / --as-group', () => {
  it('kubectl --as nobody runs as nobody: can-i answers for nobody', async () => {
    const pods = await h.kubectl(jane, ['auth', 'can-i', 'list', 'pods', '--as', 'nobody']);
    expect(pods.stdout.trim()).toBe('yes');
    const secrets = await h.kubectl(jane, ['auth', 'can-i', 'list', 'secrets', '--as', 'nobody']);
    expect(secrets.stdout.trim()).toBe('no');
    const team = await h.kubectl(jane, ['auth', 'can-i', 'list', 'secrets', '--as', 'nobody',
      '--as-group', 'team']);
    expect(team.stdout.trim()).toBe('yes');
  });

  it('kubectl get as a user the caller may not impersonate fails with upstream\'s message',
    async () => {
      const r = await h.kubectl(bob, ['get', 'pods', '--as', 'nobody']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('Error from server (Forbidden): users "nobody" is forbidden: ' +
        'User "bob" cannot impersonate resource "users" in API group "" at the cluster scope');
      const g = await h.kubectl(jane, ['get', 'secrets', '--as', 'nobody', '--as-group',
        'admins']);
      expect(g.code).not.toBe(0);
      expect(g.stderr).toContain('groups "admins" is forbidden: User "jane" cannot ' +
        'impersonate resource "groups"');
    });

  it('kubectl --as nobody get secrets is refused for nobody (not run as the admin)', async () => {
    const r = await h.kubectl(h.admin, ['get', 'secrets', '--as', 'nobody']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('secrets is forbidden: User "nobody" cannot list resource ' +
      '"secrets" in API group "" in the namespace "default"');
  });
});

describe('injected requests (light-my-request has no headersDistinct)', () => {
  it('are impersonated as requests on a socket are', async () => {
    const s = await buildTestServer({
      authenticator: { authenticate: () => ({ name: 'jane', groups: ['system:authenticated'] }) },
      authorizer: buildAuthorizer({ mode: 'RBAC', source: memorySource([]) }),
    });
    try {
      const r = await s.req('GET', '/api/v1/namespaces/default/pods', undefined,
        { 'impersonate-user': 'nobody' });
      expect(r.status).toBe(403);
      expect(r.body.message).toMatch(/^users "nobody" is forbidden: User "jane" cannot/);
    } finally {
      await s.done();
    }
  });
});
