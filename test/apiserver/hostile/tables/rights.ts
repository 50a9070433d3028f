// Requests by identities without the right to make them: a token user with no RBAC rights
// (`nobody`), no credentials at all (`anonymous`), a bearer token that matches no one
// (`badtoken`), and a user who may only read ConfigMaps in one namespace (`cm-reader`), with
// hostile bodies, so authorization must come before decoding. Upstream: authentication failure is
// 401 Unauthorized (message "Unauthorized"); an RBAC refusal is 403 Forbidden naming the user,
// the verb and the resource (`User "x" cannot list resource "configmaps" …`); impersonation
// needs the `impersonate` verb (403 otherwise).

import type { HostileCase, HostileTable, Refused } from '../cases.js';
import type { Identity } from '../harness.js';
import { NOBODY_USER } from '../harness.js';
import { APPS, CORE, expectStored, KINDS, NS, VICTIM } from '../fixtures.js';

const CM = `${CORE}/configmaps`;
const UNAUTHORIZED: Refused = { code: 401, reason: 'Unauthorized', mentions: ['Unauthorized'] };

interface Attempt {
  readonly what: string;
  readonly verb: string;
  readonly resource: string;
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly streaming?: boolean;
}

const ATTEMPTS: readonly Attempt[] = [
  { what: 'get a ConfigMap', verb: 'get', resource: 'configmaps', method: 'GET',
    path: `${CM}/cm` },
  { what: 'list ConfigMaps', verb: 'list', resource: 'configmaps', method: 'GET', path: CM },
  { what: 'watch ConfigMaps', verb: 'watch', resource: 'configmaps', method: 'GET',
    path: `${CM}?watch=1&timeoutSeconds=1`, streaming: true },
  { what: 'create a ConfigMap whose data is an array', verb: 'create', resource: 'configmaps',
    method: 'POST', path: CM, body: { metadata: { name: 'r-new' }, data: ['x'] } },
  { what: 'update a ConfigMap with a malformed body', verb: 'update', resource: 'configmaps',
    method: 'PUT', path: `${CM}/cm`, body: '{"metadata":' },
  { what: 'merge patch a ConfigMap', verb: 'patch', resource: 'configmaps', method: 'PATCH',
    path: `${CM}/cm`, body: { data: { k: 'owned' } }, contentType: 'application/merge-patch+json' },
  { what: 'JSON patch a ConfigMap through __proto__', verb: 'patch', resource: 'configmaps',
    method: 'PATCH', path: `${CM}/cm`, contentType: 'application/json-patch+json',
    body: [{ op: 'add', path: '/__proto__/polluted', value: 'yes' }] },
  { what: 'strategic merge patch a Deployment', verb: 'patch', resource: 'deployments',
    method: 'PATCH', path: `${APPS}/deployments/web`, body: { spec: { replicas: 9 } },
    contentType: 'application/strategic-merge-patch+json' },
  { what: 'apply a ConfigMap', verb: 'patch', resource: 'configmaps', method: 'PATCH',
    path: `${CM}/cm?fieldManager=x`, contentType: 'application/apply-patch+yaml',
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { k: 'x' } } },
  { what: 'delete a ConfigMap', verb: 'delete', resource: 'configmaps', method: 'DELETE',
    path: `${CM}/cm` },
  { what: 'deletecollection ConfigMaps', verb: 'deletecollection', resource: 'configmaps',
    method: 'DELETE', path: CM },
  { what: 'get a Secret', verb: 'get', resource: 'secrets', method: 'GET',
    path: `${CORE}/secrets/sec` },
  { what: 'list Secrets in every namespace', verb: 'list', resource: 'secrets', method: 'GET',
    path: '/api/v1/secrets' },
  { what: 'create a Deployment', verb: 'create', resource: 'deployments', method: 'POST',
    path: `${APPS}/deployments`, body: KINDS.Deployment.make('r-dep') },
  { what: 'scale a Deployment', verb: 'update', resource: 'deployments/scale', method: 'PUT',
    path: `${APPS}/deployments/web/scale`, body: { apiVersion: 'autoscaling/v1', kind: 'Scale',
      metadata: { name: 'web', namespace: NS }, spec: { replicas: 9 } } },
  { what: 'list Nodes', verb: 'list', resource: 'nodes', method: 'GET', path: '/api/v1/nodes' },
  { what: 'create a Namespace', verb: 'create', resource: 'namespaces', method: 'POST',
    path: '/api/v1/namespaces', body: { metadata: { name: 'r-ns' } } },
  { what: 'bind itself to cluster-admin', verb: 'create', resource: 'clusterrolebindings',
    method: 'POST', path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
    body: { metadata: { name: 'r-escalate' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'User',
      apiGroup: 'rbac.authorization.k8s.io', name: NOBODY_USER }] } },
];

const USERS: Record<'nobody' | 'anonymous', string> = {
  nobody: NOBODY_USER, anonymous: 'system:anonymous',
};

function refusal(as: Identity, a: Attempt): Refused {
  if (as === 'badtoken') return UNAUTHORIZED;
  return { code: 403, reason: 'Forbidden', mentions: [`User "${USERS[as as 'nobody']}"`,
    `cannot ${a.verb} resource "${a.resource}"`] };
}

const MATRIX: HostileCase[] = (['nobody', 'anonymous', 'badtoken'] as const).flatMap((as) =>
  ATTEMPTS.map((a): HostileCase => ({
    name: `${as}: ${a.what}`, method: a.method, path: a.path, body: a.body,
    contentType: a.contentType, streaming: a.streaming, as, expect: refusal(as, a),
  })));

const OTHERS: HostileCase[] = [
  { name: 'cm-reader: update a ConfigMap', method: 'PUT', path: `${CM}/cm`, as: 'cm-reader',
    body: KINDS.ConfigMap.make('cm'), expect: { code: 403, reason: 'Forbidden',
      mentions: ['cannot update resource "configmaps"'] } },
  { name: 'cm-reader: read a ConfigMap in another namespace', method: 'GET',
    path: `/api/v1/namespaces/${VICTIM}/configmaps/keep`, as: 'cm-reader',
    expect: { code: 403, reason: 'Forbidden' } },
  { name: 'cm-reader: list ConfigMaps in every namespace', method: 'GET',
    path: '/api/v1/configmaps', as: 'cm-reader', expect: { code: 403, reason: 'Forbidden' } },
  { name: 'cm-reader: bind itself to the edit ClusterRole', method: 'POST', as: 'cm-reader',
    path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`,
    body: { metadata: { name: 'r-edit' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole', name: 'edit' }, subjects: [{ kind: 'User',
      apiGroup: 'rbac.authorization.k8s.io', name: 'hostile-cm-reader' }] },
    expect: { code: 403, reason: 'Forbidden' } },
  { name: 'nobody impersonating kubernetes-admin lists Secrets', method: 'GET',
    path: '/api/v1/secrets', as: 'nobody', headers: { 'impersonate-user': 'kubernetes-admin' },
    expect: { code: 403, reason: 'Forbidden', mentions: ['impersonate'] } },
  { name: 'nobody impersonating group system:masters lists Secrets', method: 'GET',
    path: '/api/v1/secrets', as: 'nobody',
    headers: { 'impersonate-user': NOBODY_USER, 'impersonate-group': 'system:masters' },
    expect: { code: 403, reason: 'Forbidden', mentions: ['impersonate'] } },
  { name: 'admin impersonating nobody lists Secrets (as nobody)', method: 'GET',
    path: '/api/v1/secrets', headers: { 'impersonate-user': NOBODY_USER },
    expect: { code: 403, reason: 'Forbidden', mentions: [`User "${NOBODY_USER}"`] } },
  { name: 'nobody: a SelfSubjectAccessReview (control)', method: 'POST', as: 'nobody',
    path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { verb: 'get', resource: 'secrets', namespace: NS } } },
    expect: { ok: 201, writes: false } },
  { name: 'nobody: discovery at /api (control)', method: 'GET', path: '/api', as: 'nobody',
    expect: { ok: 200, writes: false } },
  { name: 'anonymous: /version (control)', method: 'GET', path: '/version', as: 'anonymous',
    expect: { ok: 200, writes: false } },
  { name: 'badtoken: /version', method: 'GET', path: '/version', as: 'badtoken',
    expect: UNAUTHORIZED },
  { name: 'cm-reader: get a ConfigMap (control)', method: 'GET', path: `${CM}/cm`,
    as: 'cm-reader', expect: { ok: 200, writes: false } },
];

export const RIGHTS_TABLE: HostileTable = {
  cases: [...MATRIX, ...OTHERS].map((c) => c.method === 'GET' || c.method === 'POST' ? c :
    { ...c, after: (h) => expectStored(h, c.path.split('?')[0]!.startsWith(CM) ? `${CM}/cm` :
      `${APPS}/deployments/web`) }),
};
