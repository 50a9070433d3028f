import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAdmittedServer, type AdmittedServer } from './helpers/admitted-server.js';
import { pod } from './helpers/server.js';

const PODS = '/api/v1/namespaces/default/pods';
const SMP = { 'content-type': 'application/strategic-merge-patch+json' };

describe('strategic merge patch directives are checked as upstream (mergepatch errors)', () => {
  let s: AdmittedServer;
  beforeAll(async () => {
    s = await buildAdmittedServer();
    await s.req('POST', PODS, { ...pod('p'), metadata: { name: 'p', labels: { a: '1' },
      finalizers: ['x/y'] } });
  });
  afterAll(async () => { await s.done(); });

  const cases: Array<[string, unknown, string]> = [
    ['$patch: bogus in a map', { metadata: { $patch: 'bogus' } },
      'unknown patch type: bogus in map: map[$patch:bogus]'],
    ['$patch: merge in a map', { spec: { $patch: 'merge', hostname: 'h' } },
      'unknown patch type: merge in map: map[$patch:merge hostname:h]'],
    ['$patch: bogus in a merged list', { spec: { containers: [{ name: 'c', $patch: 'bogus' }] } },
      'unknown patch type: bogus in map: map[$patch:bogus name:c]'],
    ['$patch: merge in a merged list', { spec: { containers: [{ name: 'c', $patch: 'merge' }] } },
      'merging lists cannot yet be specified in the patch'],
    ['$patch: delete without the merge key', { spec: { containers: [{ $patch: 'delete' }] } },
      'map: map[$patch:delete] does not contain declared merge key: name'],
    ['$retainKeys that is not a list', { spec: { $retainKeys: 'x' } },
      'invalid patch format of retainKeys'],
    ['$retainKeys not naming a patched field', { spec: { $retainKeys: ['a'], hostname: 'h' } },
      'invalid patch format of retainKeys'],
    ['$deleteFromPrimitiveList that is not a list',
      { metadata: { '$deleteFromPrimitiveList/finalizers': 'x/y' } },
      'invalid patch format of primitive list'],
    ['$setElementOrder that is not a list',
      { spec: { '$setElementOrder/containers': { name: 'c' } } },
      'invalid patch format of setElementOrder list'],
  ];
  for (const [name, body, message] of cases) {
    it(`${name} is 400 BadRequest and writes nothing`, async () => {
      const before = s.rev();
      const r = await s.req('PATCH', `${PODS}/p`, body, SMP);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', message });
      expect(s.rev()).toBe(before);
    });
  }

  it('valid directives still apply', async () => {
    const r = await s.req('PATCH', `${PODS}/p`, { metadata: {
      '$deleteFromPrimitiveList/finalizers': ['x/y'], labels: { $patch: 'replace', b: '2' } } },
    SMP);
    expect(r.status).toBe(200);
    expect(r.body.metadata.labels).toEqual({ b: '2' });
    expect(r.body.metadata.finalizers ?? []).toEqual([]);
  });
});
