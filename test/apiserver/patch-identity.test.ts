import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildAdmittedServer, type AdmittedServer } from './helpers/admitted-server.js';
import { pod } from './helpers/server.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const PODS = '/api/v1/namespaces/default/pods';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const JSONP = { 'content-type': 'application/json-patch+json' };
const SMP = { 'content-type': 'application/strategic-merge-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

describe('a patch may not change what an object is, nor its name, namespace or uid', () => {
  let s: AdmittedServer;
  let before: number;
  beforeEach(async () => {
    s = await buildAdmittedServer();
    await s.req('POST', CMS, { metadata: { name: 'c' }, data: { a: '1' } });
    await s.req('POST', PODS, pod('p'));
    before = s.rev();
  });
  afterEach(async () => {
    expect(s.rev()).toBe(before);
    const c = (await s.req('GET', `${CMS}/c`)).body;
    expect([c.kind, c.apiVersion, c.metadata.name]).toEqual(['ConfigMap', 'v1', 'c']);
    await s.done();
  });

  for (const [type, headers, body] of [
    ['merge', MERGE, { kind: 'Foo' }],
    ['strategic', SMP, { kind: 'Foo' }],
    ['json', JSONP, [{ op: 'replace', path: '/kind', value: 'Foo' }]],
  ] as const) {
    it(`a ${type} patch of kind is 422 Invalid (no kind "Foo" is registered)`, async () => {
      const r = await s.req('PATCH', `${PODS}/p`, body, headers);
      expect(r.status).toBe(422);
      expect(r.body.reason).toBe('Invalid');
      expect(r.body.message).toMatch(/^ "" is invalid: patch: Invalid value: ".*": no kind/s);
      expect(r.body.message.endsWith('no kind "Foo" is registered for version "v1" in ' +
        'scheme "pkg/api/legacyscheme/scheme.go:30"')).toBe(true);
      expect(r.body.details.causes[0]).toMatchObject({ reason: 'FieldValueInvalid',
        field: 'patch' });
      expect((await s.req('GET', `${PODS}/p`)).body.kind).toBe('Pod');
    });
  }

  it('a merge patch of apiVersion is 422 (no kind "ConfigMap" for version "v9")', async () => {
    const r = await s.req('PATCH', `${CMS}/c`, { apiVersion: 'v9' }, MERGE);
    expect(r.status).toBe(422);
    expect(r.body.message).toMatch(/no kind "ConfigMap" is registered for version "v9"/);
  });

  it('an apply of another type or version is 400 invalid object type', async () => {
    const r = await s.req('PATCH', `${CMS}/c?fieldManager=t`,
      'apiVersion: v9\nkind: ConfigMap\nmetadata:\n  name: c\n', APPLY);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ reason: 'BadRequest',
      message: 'invalid object type: /v9, Kind=ConfigMap' });
    const k = await s.req('PATCH', `${CMS}/c?fieldManager=t`,
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: c\n', APPLY);
    expect(k.body.message).toBe('invalid object type: /v1, Kind=Secret');
  });

  for (const [type, headers, body] of [
    ['merge', MERGE, { metadata: { name: 'other' } }],
    ['strategic', SMP, { metadata: { name: 'other' } }],
    ['json', JSONP, [{ op: 'replace', path: '/metadata/name', value: 'other' }]],
  ] as const) {
    it(`a ${type} patch of metadata.name is 400 (name does not match the URL)`, async () => {
      const r = await s.req('PATCH', `${CMS}/c`, body, headers);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ reason: 'BadRequest', message:
        'the name of the object (other) does not match the name on the URL (c)' });
      expect((await s.req('GET', `${CMS}/other`)).status).toBe(404);
    });
  }

  it('removing metadata.name is 400 (name undeterminable)', async () => {
    const r = await s.req('PATCH', `${CMS}/c`, [{ op: 'remove', path: '/metadata/name' }], JSONP);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('the name of the object (c based on URL) was undeterminable: ' +
      'name must be provided');
  });

  it('a patch of metadata.namespace is 400 (namespace does not match the request)', async () => {
    const r = await s.req('PATCH', `${CMS}/c`, { metadata: { namespace: 'kube-system' } }, MERGE);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('the namespace of the provided object does not match the ' +
      'namespace sent on the request');
  });

  it('a patch of metadata.uid is 422 field is immutable', async () => {
    const r = await s.req('PATCH', `${CMS}/c`,
      [{ op: 'replace', path: '/metadata/uid', value: 'forged' }], JSONP);
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ reason: 'Invalid',
      message: 'ConfigMap "c" is invalid: metadata.uid: Invalid value: "forged": ' +
        'field is immutable',
      details: { name: 'c', kind: 'ConfigMap', causes: [{ reason: 'FieldValueInvalid',
        field: 'metadata.uid', message: 'Invalid value: "forged": field is immutable' }] } });
  });

  it('a PUT naming another uid fails its uid precondition (409)', async () => {
    const cur = (await s.req('GET', `${CMS}/c`)).body;
    const r = await s.req('PUT', `${CMS}/c`,
      { ...cur, metadata: { ...cur.metadata, uid: 'forged' }, data: { a: '2' } });
    expect(r.status).toBe(409);
    expect(r.body.reason).toBe('Conflict');
    expect(r.body.message).toContain('Precondition failed: UID in precondition: forged, ' +
      `UID in object meta: ${cur.metadata.uid}`);
    expect(r.body.details).toEqual({ name: 'c', kind: 'configmaps' });
  });
});
