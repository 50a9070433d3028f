import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_USER } from '../../../src/apiserver/app.js';
import { buildAuthorizer } from '../../../src/apiserver/authz/index.js';
import type { Authenticator } from '../../../src/apiserver/pipeline-types.js';
import { buildStoreRbacSource } from '../../../src/apiserver/rbac-source.js';
import type { StoreRbacSource } from '../../../src/apiserver/rbac-source.js';
import { buildDefaultCatalog } from '../../../src/apiserver/resources.js';
import { buildEmbeddedStore } from '../../../src/store/index.js';
import { buildTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const PODS = '/api/v1/namespaces/default/pods';
const JANE = { 'x-test-user': 'jane' };

/** `x-test-user: jane` is jane; no header is the admin. */
const authenticator: Authenticator = {
  authenticate: (req) => (req.headers['x-test-user'] === 'jane' ?
    { name: 'jane', groups: ['system:authenticated'] } : ADMIN_USER),
};

describe('the RBAC authorizer over the store keeps its rule index until RBAC changes', () => {
  let s: TestServer;
  let source: StoreRbacSource;
  let reads = 0;
  beforeEach(async () => {
    const store = await buildEmbeddedStore();
    const catalog = buildDefaultCatalog();
    let srv: TestServer | undefined;
    source = buildStoreRbacSource(store, catalog, () => srv?.service.deps);
    type ListArgs = Parameters<StoreRbacSource['list']>;
    const counted = { ...source, list: (...a: ListArgs) => {
      reads++;
      return source.list(...a);
    } };
    reads = 0;
    srv = await buildTestServer({ store, catalog, authenticator,
      authorizer: buildAuthorizer({ mode: 'RBAC', source: counted }) });
    s = srv;
    await s.req('POST', `${RBAC}/namespaces/default/roles`, { metadata: { name: 'pod-reader' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] });
  });
  afterEach(async () => { source.stop(); await s.done(); });

  it('a new RoleBinding takes effect on the next request, and its deletion too', async () => {
    expect((await s.req('GET', PODS, undefined, JANE)).status).toBe(403);
    const rb = await s.req('POST', `${RBAC}/namespaces/default/rolebindings`, {
      metadata: { name: 'jane-reads' },
      subjects: [{ kind: 'User', name: 'jane', apiGroup: 'rbac.authorization.k8s.io' }],
      roleRef: { kind: 'Role', name: 'pod-reader', apiGroup: 'rbac.authorization.k8s.io' } });
    expect(rb.status).toBe(201);
    expect((await s.req('GET', PODS, undefined, JANE)).status).toBe(200);
    expect((await s.req('DELETE', `${PODS}/x`, undefined, JANE)).status).toBe(403);
    await s.req('DELETE', `${RBAC}/namespaces/default/rolebindings/jane-reads`);
    expect((await s.req('GET', PODS, undefined, JANE)).status).toBe(403);
  });

  it('a Role gaining a verb takes effect; unrelated writes keep the cache', async () => {
    await s.req('POST', `${RBAC}/namespaces/default/rolebindings`, {
      metadata: { name: 'jane-reads' }, subjects: [{ kind: 'User', name: 'jane' }],
      roleRef: { kind: 'Role', name: 'pod-reader', apiGroup: 'rbac.authorization.k8s.io' } });
    expect((await s.req('GET', PODS, undefined, JANE)).status).toBe(200);
    const before = reads;
    for (let i = 0; i < 3; i++) {
      await s.req('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `c${i}` } });
      expect((await s.req('GET', PODS, undefined, JANE)).status).toBe(200);
    }
    expect(reads).toBe(before);
    expect((await s.req('POST', PODS, { metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'x' }] } }, JANE)).status).toBe(403);
    await s.req('PUT', `${RBAC}/namespaces/default/roles/pod-reader`, {
      metadata: { name: 'pod-reader' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'create'] }] });
    expect((await s.req('POST', PODS, { metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'x' }] } }, JANE)).status).toBe(201);
    expect(reads).toBeGreaterThan(before);
  });
});
