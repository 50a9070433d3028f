import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_USER } from '../../../src/apiserver/app.js';
import { startApiServer } from '../../../src/apiserver/start.js';
import { buildInProcessClient } from '../../../src/client/in-process.js';
import {
  bootstrapRbacObjects, buildAuthorizer, buildStoreNodeGraph, NodeGraph, parseAuthorizationModes,
  type StoreNodeGraph,
} from '../../../src/apiserver/authz/index.js';
import { withoutLegacyNodeSubjects } from '../../../src/apiserver/authz/bootstrap-migrate.js';
import type { AuthzAttributes, UserInfo } from '../../../src/apiserver/pipeline-types.js';
import type { KubeObject } from '../../../src/client/types.js';
import { isKdpError } from '../../../src/errors.js';
import { buildMemoryStore } from '../../../src/store/index.js';
import { memorySource } from './rbac-source.js';

const n1: UserInfo = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };

function pod(name: string, nodeName: string | undefined, spec: Record<string, unknown> = {}) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: { ...(nodeName ? { nodeName } : {}), containers: [], ...spec } } as KubeObject;
}

const get = (resource: string, name: string, more: Partial<AuthzAttributes> = {}):
  AuthzAttributes => ({ user: n1, verb: 'get', resourceRequest: true, apiGroup: '', resource,
  namespace: 'default', name, ...more });

describe('the node graph', () => {
  it('relates every object a bound pod refers to, and forgets them with the last pod', () => {
    const g = new NodeGraph();
    const spec = {
      imagePullSecrets: [{ name: 'pull' }],
      serviceAccountName: 'sa',
      initContainers: [{ name: 'i', envFrom: [{ configMapRef: { name: 'cm-env' } }] }],
      volumes: [{ name: 'v', secret: { secretName: 'vol' } },
        { name: 'p', projected: { sources: [{ configMap: { name: 'cm-proj' } }] } },
        { name: 'c', persistentVolumeClaim: { claimName: 'claim' } },
        { name: 'e', ephemeral: {} }],
    };
    g.setPod(pod('a', 'n1', spec));
    g.setPod(pod('b', 'n1', { volumes: [{ name: 'v', secret: { secretName: 'vol' } }] }));
    for (const [t, n] of [['secret', 'pull'], ['secret', 'vol'], ['configmap', 'cm-env'],
      ['configmap', 'cm-proj'], ['pvc', 'claim'], ['pvc', 'a-e'], ['serviceaccount', 'sa'],
      ['pod', 'a']] as const) {
      expect(g.hasPath('n1', t, 'default', n), `${t} ${n}`).toBe(true);
      expect(g.hasPath('n2', t, 'default', n)).toBe(false);
    }
    g.deletePod('default', 'a');
    expect(g.hasPath('n1', 'secret', 'default', 'pull')).toBe(false);
    expect(g.hasPath('n1', 'secret', 'default', 'vol')).toBe(true);
    // Rescheduled (a new pod object with another node) moves the relation.
    g.setPod(pod('b', 'n2', { volumes: [{ name: 'v', secret: { secretName: 'vol' } }] }));
    expect(g.hasPath('n1', 'secret', 'default', 'vol')).toBe(false);
    expect(g.hasPath('n2', 'secret', 'default', 'vol')).toBe(true);
  });

  it('an unbound pod, or malformed references, relate nothing', () => {
    const g = new NodeGraph();
    g.setPod(pod('u', undefined, { volumes: [{ secret: { secretName: 's' } }] }));
    g.setPod(pod('m', 'n1', { volumes: 'nope', containers: [{ env: [null, 5] }] }));
    expect(g.hasPath('n1', 'secret', 'default', 's')).toBe(false);
    expect(g.size).toBe(1);
  });
});

describe('the store-fed graph', () => {
  let graph: StoreNodeGraph | undefined;
  afterEach(() => graph?.stop());

  it('follows pods written to the store after its first list', async () => {
    const store = buildMemoryStore();
    await store.create('/registry/pods/default/early', JSON.stringify(pod('early', 'n1',
      { volumes: [{ secret: { secretName: 's1' } }] })));
    graph = buildStoreNodeGraph(store, '/registry/pods/');
    await graph.ready();
    expect(graph.hasPath('n1', 'secret', 'default', 's1')).toBe(true);
    await store.create('/registry/pods/default/late', JSON.stringify(pod('late', 'n1',
      { volumes: [{ secret: { secretName: 's2' } }] })));
    expect(graph.hasPath('n1', 'secret', 'default', 's2')).toBe(true);
    await store.delete('/registry/pods/default/early');
    expect(graph.hasPath('n1', 'secret', 'default', 's1')).toBe(false);
    await store.close();
  });
});

describe('Node,RBAC', () => {
  const graph = new NodeGraph();
  graph.setPod(pod('p1', 'n1', { volumes: [{ secret: { secretName: 'mine' } }] }));
  const authz = buildAuthorizer({ mode: 'Node,RBAC', source: memorySource(bootstrapRbacObjects()),
    nodeGraph: graph });

  it('allows a node what its pods use and refuses the rest with upstream\'s reason', async () => {
    expect((await authz.authorize(get('secrets', 'mine'))).allowed).toBe(true);
    expect(await authz.authorize(get('secrets', 'yours'))).toEqual({ allowed: false,
      reason: 'no relationship found between node \'n1\' and this object' });
    expect((await authz.authorize(get('pods', 'p1'))).allowed).toBe(true);
  });

  it('applies the static system:node rules to resources it does not subdivide', async () => {
    expect((await authz.authorize(get('services', '', { verb: 'list' }))).allowed).toBe(true);
    expect((await authz.authorize(get('services', 'x', { verb: 'delete' }))).allowed)
      .toBe(false);
  });

  it('leaves users that are not nodes to RBAC (a node name outside system:nodes is not one)',
    async () => {
      const impostor = { name: 'system:node:n1', groups: ['system:authenticated'] };
      expect((await authz.authorize(get('secrets', 'mine', { user: impostor }))).allowed)
        .toBe(false);
    });

  it('parses the mode list as --authorization-mode', () => {
    expect(parseAuthorizationModes('Node,RBAC')).toEqual(['Node', 'RBAC']);
    for (const bad of ['ABAC', 'RBAC,RBAC', '']) {
      let err: unknown;
      try { parseAuthorizationModes(bad); } catch (e) { err = e; }
      expect(isKdpError(err, 'KDP_CONFIG'), bad).toBe(true);
    }
  });
});

describe('bootstrap migration', () => {
  it('drops the system:nodes subject an older kdp bound system:node to', () => {
    const old = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding',
      metadata: { name: 'system:node',
        annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' } },
      roleRef: { kind: 'ClusterRole', name: 'system:node' },
      subjects: [{ kind: 'Group', name: 'system:nodes' }] } as KubeObject;
    const next = withoutLegacyNodeSubjects(old)!;
    expect(next.subjects).toBeUndefined();
    expect(withoutLegacyNodeSubjects(next)).toBeUndefined();
    const pinned = { ...old, metadata: { name: 'system:node',
      annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } } };
    expect(withoutLegacyNodeSubjects(pinned as KubeObject)).toBeUndefined();
  });
});

describe('a data dir from before the Node authorizer', () => {
  it('loses the system:nodes subject of system:node at the next start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kdp-node-migrate-'));
    const CRB = { group: 'rbac.authorization.k8s.io', version: 'v1',
      resource: 'clusterrolebindings' };
    try {
      const first = await startApiServer({ dataDir: dir, port: 0 });
      const client = buildInProcessClient(first.server.service, ADMIN_USER);
      const crb = await client.get<KubeObject>(CRB, 'system:node');
      expect(crb.subjects).toBeUndefined();
      await client.update(CRB, { ...crb, subjects: [{ apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Group', name: 'system:nodes' }] });
      await first.close();
      const second = await startApiServer({ dataDir: dir, port: 0 });
      const after = await buildInProcessClient(second.server.service, ADMIN_USER)
        .get<KubeObject>(CRB, 'system:node');
      await second.close();
      expect(after.subjects).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
