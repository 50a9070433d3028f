import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthHarness, type AuthHarness, type Identity } from '../authn/auth-harness.js';
import { kubectlMissing } from '../helpers/kubectl.js';

// A node's certificate (system:node:n1 in system:nodes) over HTTPS through the production
// path, with the default authorization (Node,RBAC) and admission (NodeRestriction): it reads
// only what its pods use and changes only its own Node, pods and Lease.
let h: AuthHarness;
let n1: Identity;

const NS = '/api/v1/namespaces/default';
const MERGE = { 'content-type': 'application/merge-patch+json' };

function pod(name: string, nodeName: string, secret?: string) {
  return {
    metadata: { name, labels: { app: name } },
    spec: {
      nodeName,
      containers: [{ name: 'c', image: 'kdp/echo:1',
        ...(secret ? { env: [{ name: 'S', valueFrom: { secretKeyRef: { name: secret,
          key: 'k' } } }] } : {}) }],
    },
  };
}

const node = (name: string) => ({ metadata: { name }, spec: {} });

beforeAll(async () => {
  h = await startAuthHarness();
  n1 = await h.identity('system:node:n1', ['system:nodes']);
  const a = h.admin;
  const setup = [
    await h.req(a, 'POST', '/api/v1/nodes', node('n1')),
    await h.req(a, 'POST', '/api/v1/nodes', node('n2')),
    await h.req(a, 'POST', `${NS}/secrets`, { metadata: { name: 'used' },
      data: { k: 'dmFsdWU=' } }),
    await h.req(a, 'POST', `${NS}/secrets`, { metadata: { name: 'other' },
      data: { k: 'c2VjcmV0' } }),
    await h.req(a, 'POST', `${NS}/pods`, pod('p1', 'n1', 'used')),
    await h.req(a, 'POST', `${NS}/pods`, pod('p2', 'n2', 'other')),
  ];
  for (const r of setup) expect(r.status, r.text).toBe(201);
}, 60_000);

afterAll(async () => { await h?.close(); });

/** The object's resourceVersion as the admin reads it (unchanged by a refused write). */
async function rv(path: string): Promise<string> {
  return (await h.req(h.admin, 'GET', path)).body.metadata.resourceVersion;
}

describe('Node authorizer: what a node may read', () => {
  it('node n1 cannot read a Secret that none of its pods uses', async () => {
    const r = await h.req(n1, 'GET', `${NS}/secrets/other`);
    expect(r.status).toBe(403);
    expect(r.body.message).toBe('secrets "other" is forbidden: User "system:node:n1" cannot ' +
      'get resource "secrets" in API group "" in the namespace "default": no relationship ' +
      'found between node \'n1\' and this object');
  });

  it('node n1 can read the Secret its pod uses', async () => {
    const r = await h.req(n1, 'GET', `${NS}/secrets/used`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.k).toBe('dmFsdWU=');
  });

  it('node n1 cannot list Secrets, nor pods without its spec.nodeName selector', async () => {
    expect((await h.req(n1, 'GET', `${NS}/secrets`)).status).toBe(403);
    const all = await h.req(n1, 'GET', '/api/v1/pods');
    expect(all.status).toBe(403);
    expect(all.body.message).toContain('can only list/watch pods with spec.nodeName field ' +
      'selector');
    const own = await h.req(n1, 'GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1');
    expect(own.status, own.text).toBe(200);
    expect(own.body.items.map((p: any) => p.metadata.name)).toEqual(['p1']);
  });

  it('node n1 reads its own Node (also by a metadata.name watch) but not n2', async () => {
    expect((await h.req(n1, 'GET', '/api/v1/nodes/n1')).status).toBe(200);
    const byName = await h.req(n1, 'GET', '/api/v1/nodes?fieldSelector=metadata.name%3Dn1');
    expect(byName.status, byName.text).toBe(200);
    const other = await h.req(n1, 'GET', '/api/v1/nodes/n2');
    expect(other.status).toBe(403);
    expect(other.body.message).toBe('nodes "n2" is forbidden: User "system:node:n1" cannot ' +
      'get resource "nodes" in API group "" at the cluster scope: node \'n1\' cannot read ' +
      '\'n2\', only its own Node object');
  });

  it('a Secret stops being readable once the pod that used it is gone', async () => {
    expect((await h.req(h.admin, 'POST', `${NS}/secrets`, { metadata: { name: 'brief' },
      data: { k: 'eA==' } })).status).toBe(201);
    expect((await h.req(h.admin, 'POST', `${NS}/pods`, pod('p3', 'n1', 'brief'))).status)
      .toBe(201);
    expect((await h.req(n1, 'GET', `${NS}/secrets/brief`)).status).toBe(200);
    const del = await h.req(h.admin, 'DELETE', `${NS}/pods/p3?gracePeriodSeconds=0`);
    expect(del.status, del.text).toBe(200);
    expect((await h.req(n1, 'GET', `${NS}/secrets/brief`)).status).toBe(403);
  });
});

describe('NodeRestriction: what a node may change', () => {
  it('node n1 cannot modify Node n2 or its status; nothing is stored', async () => {
    const before = await rv('/api/v1/nodes/n2');
    const spec = await h.req(n1, 'PATCH', '/api/v1/nodes/n2',
      { metadata: { labels: { hacked: 'yes' } } }, MERGE);
    expect(spec.status).toBe(403);
    expect(spec.body.message).toBe('nodes "n2" is forbidden: node "n1" is not allowed to ' +
      'modify node "n2"');
    const status = await h.req(n1, 'PATCH', '/api/v1/nodes/n2/status',
      { status: { conditions: [{ type: 'Ready', status: 'False' }] } }, MERGE);
    expect(status.status).toBe(403);
    expect(status.body.message).toBe('nodes "n2" is forbidden: node "n1" is not allowed to ' +
      'modify node "n2"');
    expect(await rv('/api/v1/nodes/n2')).toBe(before);
  });

  it('node n1 cannot create another Node', async () => {
    const r = await h.req(n1, 'POST', '/api/v1/nodes', node('n3'));
    expect(r.status).toBe(403);
    expect(r.body.message).toBe('nodes "n3" is forbidden: node "n1" is not allowed to modify ' +
      'node "n3"');
    expect((await h.req(h.admin, 'GET', '/api/v1/nodes/n3')).status).toBe(404);
  });

  it('node n1 updates its own status but may not change its taints', async () => {
    const ok = await h.req(n1, 'PATCH', '/api/v1/nodes/n1/status',
      { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } },
      MERGE);
    expect(ok.status, ok.text).toBe(200);
    const taint = await h.req(n1, 'PATCH', '/api/v1/nodes/n1',
      { spec: { taints: [{ key: 'x', effect: 'NoSchedule' }] } }, MERGE);
    expect(taint.status).toBe(403);
    expect(taint.body.message).toBe('nodes "n1" is forbidden: node "n1" is not allowed to ' +
      'modify taints');
  });

  it('node n1 cannot delete n2\'s pods; the pod stays', async () => {
    const r = await h.req(n1, 'DELETE', `${NS}/pods/p2?gracePeriodSeconds=0`);
    expect(r.status).toBe(403);
    expect(r.body.message).toBe('pods "p2" is forbidden: node "n1" can only delete pods with ' +
      'spec.nodeName set to itself');
    expect((await h.req(h.admin, 'GET', `${NS}/pods/p2`)).status).toBe(200);
  });

  it('node n1 can update its own pod\'s status, not n2\'s pod\'s', async () => {
    const own = await h.req(n1, 'PATCH', `${NS}/pods/p1/status`,
      { status: { phase: 'Running', podIP: '10.244.0.5' } }, MERGE);
    expect(own.status, own.text).toBe(200);
    expect(own.body.status.phase).toBe('Running');
    const before = await rv(`${NS}/pods/p2`);
    const other = await h.req(n1, 'PATCH', `${NS}/pods/p2/status`,
      { status: { phase: 'Failed' } }, MERGE);
    expect(other.status).toBe(403);
    expect(other.body.message).toBe('pods "p2" is forbidden: node "n1" can only update pod ' +
      'status for pods with spec.nodeName set to itself');
    expect(await rv(`${NS}/pods/p2`)).toBe(before);
  });

  it('node n1 may not update a pod\'s spec, nor create a pod that is not its mirror pod',
    async () => {
      const upd = await h.req(n1, 'PATCH', `${NS}/pods/p1`,
        { metadata: { labels: { x: 'y' } } }, MERGE);
      expect(upd.status).toBe(403);
      const create = await h.req(n1, 'POST', `${NS}/pods`, pod('sneaky', 'n1'));
      expect(create.status).toBe(403);
      expect(create.body.message).toBe('pods "sneaky" is forbidden: pod does not have ' +
        '"kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods');
    });

  it('node n1 creates a mirror pod owned by its Node (with its UID), and no other', async () => {
    const uid = (await h.req(h.admin, 'GET', '/api/v1/nodes/n1')).body.metadata.uid;
    const mirror = (name: string, ownerUid: string) => ({
      ...pod(name, 'n1'),
      metadata: { name, annotations: { 'kubernetes.io/config.mirror': 'x' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: ownerUid,
          controller: true }] },
    });
    const bad = await h.req(n1, 'POST', `${NS}/pods`, mirror('static-bad', 'not-the-uid'));
    expect(bad.status).toBe(403);
    expect(bad.body.message).toBe(`pods "static-bad" is forbidden: node n1 UID mismatch: ` +
      `expected not-the-uid got ${uid}`);
    const ok = await h.req(n1, 'POST', `${NS}/pods`, mirror('static-web', uid));
    expect(ok.status, ok.text).toBe(201);
  });

  it('node n1 renews only its own Lease and may record Events', async () => {
    const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
    const lease = (name: string) => ({ metadata: { name },
      spec: { holderIdentity: name, leaseDurationSeconds: 40 } });
    expect((await h.req(n1, 'POST', LEASES, lease('n1'))).status).toBe(201);
    const other = await h.req(n1, 'POST', LEASES, lease('n2'));
    expect(other.status).toBe(403);
    expect(other.body.message).toBe('leases.coordination.k8s.io "n2" is forbidden: can only ' +
      'access node lease with the same name as the requesting node');
    expect((await h.req(n1, 'GET', `${LEASES}/n2`)).status).toBe(403);
    const ev = await h.req(n1, 'POST', `${NS}/events`, {
      metadata: { name: 'n1.started' }, involvedObject: { kind: 'Node', name: 'n1' },
      reason: 'Starting', message: 'kubelet', type: 'Normal' });
    expect(ev.status, ev.text).toBe(201);
  });
});

describe.skipIf(kubectlMissing(32))('kubectl with a node\'s kubeconfig', () => {
  it('reads the Secret its pod uses, is refused another and n2\'s Node', async () => {
    expect((await h.kubectl(n1, ['get', 'secret', 'used', '-o', 'name'])).stdout.trim())
      .toBe('secret/used');
    const other = await h.kubectl(n1, ['get', 'secret', 'other']);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('Error from server (Forbidden): secrets "other" is ' +
      'forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the ' +
      'namespace "default": no relationship found between node \'n1\' and this object');
    const label = await h.kubectl(n1, ['label', 'node', 'n2', 'x=y']);
    expect(label.code).not.toBe(0);
    // kubectl reads the Node first: the node may not even see it.
    expect(label.stderr).toContain('nodes "n2" is forbidden: User "system:node:n1" cannot get ' +
      'resource "nodes" in API group "" at the cluster scope: node \'n1\' cannot read \'n2\', ' +
      'only its own Node object');
  });

  it('the admin sees the same answers with --as system:node:n1 --as-group system:nodes',
    async () => {
      const as = ['--as', 'system:node:n1', '--as-group', 'system:nodes'];
      const r = await h.kubectl(h.admin, ['auth', 'can-i', 'get', 'secret/other', ...as]);
      expect(r.stdout.trim()).toBe('no - no relationship found between node \'n1\' and this ' +
        'object');
      const ok = await h.kubectl(h.admin, ['auth', 'can-i', 'get', 'secret/used', ...as]);
      expect(ok.stdout.trim()).toBe('yes');
    });
});
