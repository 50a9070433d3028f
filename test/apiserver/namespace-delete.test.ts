import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildAdmittedServer, type AdmittedServer } from './helpers/admitted-server.js';
import { deployment } from './helpers/server.js';

type Server = AdmittedServer;
const NS = '/api/v1/namespaces';
const cm = (name: string) => ({ metadata: { name }, data: { a: '1' } });

describe('namespace DELETE checks everything before anything is removed', () => {
  let s: Server;
  beforeEach(async () => {
    s = await buildAdmittedServer();
    await s.req('POST', NS, { metadata: { name: 'victim' } });
    await s.req('POST', `${NS}/victim/configmaps`, cm('keep'));
    await s.req('POST', `${NS}/default/configmaps`, cm('keep'));
    await s.req('POST', '/apis/apps/v1/namespaces/default/deployments', deployment('web'));
  });
  afterEach(async () => { await s.done(); });

  const contentsOf = async (ns: string) =>
    (await s.req('GET', `${NS}/${ns}/configmaps`)).body.items.map((i: any) => i.metadata.name);

  it('a created namespace carries the kubernetes finalizer and is Active', async () => {
    const ns = (await s.req('GET', `${NS}/victim`)).body;
    expect(ns.spec.finalizers).toEqual(['kubernetes']);
    expect(ns.status.phase).toBe('Active');
  });

  it('a dry run deletes nothing and leaves the namespace Active', async () => {
    const before = s.rev();
    const r = await s.req('DELETE', `${NS}/victim?dryRun=All`);
    expect(r.status).toBe(200);
    expect(r.body.status.phase).toBe('Terminating');
    expect(r.body.metadata.deletionTimestamp).toBeTruthy();
    expect(s.rev()).toBe(before);
    expect(await contentsOf('victim')).toEqual(['keep']);
    const ns = (await s.req('GET', `${NS}/victim`)).body;
    expect(ns.status.phase).toBe('Active');
    expect(ns.metadata.deletionTimestamp).toBeUndefined();
  });

  it('deleting default is Forbidden by NamespaceLifecycle and removes nothing', async () => {
    const before = s.rev();
    const r = await s.req('DELETE', `${NS}/default`);
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'Forbidden',
      message: 'namespaces "default" is forbidden: this namespace may not be deleted',
      details: { name: 'default', kind: 'namespaces' } });
    expect(s.rev()).toBe(before);
    expect(await contentsOf('default')).toEqual(['keep']);
    const d = await s.req('GET', '/apis/apps/v1/namespaces/default/deployments/web');
    expect(d.status).toBe(200);
    for (const n of ['kube-system', 'kube-public']) {
      await s.req('POST', NS, { metadata: { name: n } });
      expect((await s.req('DELETE', `${NS}/${n}`)).status).toBe(403);
    }
  });

  it('a failed precondition answers 409 Conflict and removes nothing', async () => {
    const before = s.rev();
    const r = await s.req('DELETE', `${NS}/victim`,
      { preconditions: { uid: 'not-the-uid' } });
    expect(r.status).toBe(409);
    expect(r.body.reason).toBe('Conflict');
    expect(r.body.message).toMatch(/^Operation cannot be fulfilled on namespaces "victim": /);
    expect(r.body.details).toEqual({ name: 'victim', kind: 'namespaces' });
    const stale = await s.req('DELETE', `${NS}/victim`,
      { preconditions: { resourceVersion: '1' } });
    expect(stale.status).toBe(409);
    expect(s.rev()).toBe(before);
    expect(await contentsOf('victim')).toEqual(['keep']);
  });

  it('a delete marks the namespace Terminating and leaves its contents to the controller',
    async () => {
      const r = await s.req('DELETE', `${NS}/victim`);
      expect(r.status).toBe(200);
      expect(r.body.kind).toBe('Namespace');
      const ns = (await s.req('GET', `${NS}/victim`)).body;
      expect(ns.metadata.deletionTimestamp).toBeTruthy();
      expect(ns.status.phase).toBe('Terminating');
      expect(ns.spec.finalizers).toEqual(['kubernetes']);
      expect(await contentsOf('victim')).toEqual(['keep']);
      // A second delete answers the namespace as it is and writes nothing.
      const before = s.rev();
      const again = await s.req('DELETE', `${NS}/victim`);
      expect(again.status).toBe(200);
      expect(again.body.status.phase).toBe('Terminating');
      expect(s.rev()).toBe(before);
    });

  it('creating in a Terminating namespace is Forbidden with the NamespaceTerminating cause',
    async () => {
      await s.req('DELETE', `${NS}/victim`);
      const before = s.rev();
      const r = await s.req('POST', `${NS}/victim/configmaps`, cm('late'));
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ reason: 'Forbidden',
        message: 'configmaps "late" is forbidden: unable to create new content in namespace ' +
          'victim because it is being terminated',
        details: { name: 'late', kind: 'configmaps', causes: [{ reason: 'NamespaceTerminating',
          field: 'metadata.namespace', message: 'namespace victim is being terminated' }] } });
      expect(s.rev()).toBe(before);
    });

  it('spec.finalizers change only through namespaces/finalize, which then removes it',
    async () => {
      await s.req('DELETE', `${NS}/victim`);
      const p = await s.req('PATCH', `${NS}/victim`, { spec: { finalizers: [] } },
        { 'content-type': 'application/merge-patch+json' });
      expect(p.status).toBe(200);
      expect(p.body.spec.finalizers).toEqual(['kubernetes']);
      const ns = (await s.req('GET', `${NS}/victim`)).body;
      const f = await s.req('PUT', `${NS}/victim/finalize`,
        { ...ns, spec: { finalizers: [] } });
      expect(f.status).toBe(200);
      expect((await s.req('GET', `${NS}/victim`)).status).toBe(404);
    });
});
