import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAdmittedServer, type AdmittedServer } from './helpers/admitted-server.js';

const CMS = '/api/v1/namespaces/default/configmaps';

describe('query parameters, media types and resourceVersions as upstream reads them', () => {
  let s: AdmittedServer;
  beforeAll(async () => {
    s = await buildAdmittedServer();
    await s.req('POST', CMS, { metadata: { name: 'c' }, data: { a: '1' } });
  });
  afterAll(async () => { await s.done(); });

  for (const via of ['req', 'inject'] as const) {
    it(`${via}: watch=True (the Python client) streams events; watch=False lists`, async () => {
      if (via === 'req') {
        const r = await s.req('GET', `${CMS}?watch=True&timeoutSeconds=1`);
        expect(r.status).toBe(200);
        expect(JSON.parse(r.text.split('\n')[0]!)).toMatchObject({ type: 'ADDED' });
      } else {
        const r = await s.inject('GET', `${CMS}?watch=True&timeoutSeconds=1`);
        expect(r.text.split('\n')[0]).toContain('"type":"ADDED"');
      }
      for (const v of ['False', 'FALSE', 'false', '0']) {
        const l = await s[via]('GET', `${CMS}?watch=${v}`);
        expect([v, l.body.kind]).toEqual([v, 'ConfigMapList']);
      }
    });

    it(`${via}: resourceVersion=abc is 400, on lists and gets`, async () => {
      for (const url of [`${CMS}?resourceVersion=abc`, `${CMS}/c?resourceVersion=abc`,
        `${CMS}?resourceVersion=-1`]) {
        const r = await s[via]('GET', url);
        expect([url, r.status, r.body.reason]).toEqual([url, 400, 'BadRequest']);
        expect(r.body.message).toMatch(/^invalid resource version: resourceVersion: Invalid/);
      }
    });

    it(`${via}: an unknown resourceVersionMatch is 422 Invalid ListOptions`, async () => {
      const r = await s[via]('GET', `${CMS}?resourceVersion=0&resourceVersionMatch=Garbage`);
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ reason: 'Invalid', message: 'ListOptions.meta.k8s.io "" ' +
        'is invalid: resourceVersionMatch: Unsupported value: "Garbage": supported values: ' +
        '"Exact", "NotOlderThan", ""', details: { group: 'meta.k8s.io', kind: 'ListOptions',
        causes: [{ reason: 'FieldValueNotSupported', field: 'resourceVersionMatch' }] } });
    });

    it(`${via}: a resourceVersion newer than the store is 504 Too large`, async () => {
      const r = await s[via]('GET', `${CMS}?resourceVersion=99999999`);
      expect(r.status).toBe(504);
      expect(r.body).toMatchObject({ reason: 'Timeout', details: { retryAfterSeconds: 1 } });
      expect(r.body.message).toMatch(/^Timeout: Too large resource version: 99999999, current/);
    });

    it(`${via}: Accept: application/xml is 406 and a refused create writes nothing`, async () => {
      const before = s.rev();
      const g = await s[via]('GET', `${CMS}/c`, undefined, { accept: 'application/xml' });
      expect([g.status, g.body.reason]).toEqual([406, 'NotAcceptable']);
      const c = await s[via]('POST', CMS, { metadata: { name: `x-${via}` } },
        { accept: 'application/xml' });
      expect(c.status).toBe(406);
      const ok = await s[via]('GET', `${CMS}/c`, undefined,
        { accept: 'application/xml, application/json;q=0.9' });
      expect(ok.status).toBe(200);
      expect(s.rev()).toBe(before);
    });

    it(`${via}: a create sent as application/json-patch+json is 415`, async () => {
      const before = s.rev();
      const r = await s[via]('POST', CMS, { metadata: { name: `p-${via}` } },
        { 'content-type': 'application/json-patch+json' });
      expect([r.status, r.body.reason]).toEqual([415, 'UnsupportedMediaType']);
      expect(s.rev()).toBe(before);
    });

    it(`${via}: write options are validated (422 <Verb>Options) before anything runs`,
      async () => {
        const before = s.rev();
        const d = await s[via]('POST', `${CMS}?dryRun=Bogus`, { metadata: { name: 'd' } });
        expect(d.status).toBe(422);
        expect(d.body.message).toBe('CreateOptions.meta.k8s.io "" is invalid: dryRun: ' +
          'Unsupported value: []string{"Bogus"}: supported values: "All"');
        const f = await s[via]('PATCH', `${CMS}/c?force=true`, { data: { b: '2' } },
          { 'content-type': 'application/merge-patch+json' });
        expect(f.status).toBe(422);
        expect(f.body.details.causes[0]).toMatchObject({ field: 'force' });
        const p = await s[via]('DELETE', `${CMS}/c?propagationPolicy=Bogus`);
        expect(p.status).toBe(422);
        expect(p.body.details.kind).toBe('DeleteOptions');
        expect(s.rev()).toBe(before);
      });
  }

  it('a list at an exact compacted revision is 410 Expired; NotOlderThan is served', async () => {
    const old = s.rev();
    await s.req('POST', CMS, { metadata: { name: 'later' } });
    await s.store.compact(s.rev());
    for (const via of ['req', 'inject'] as const) {
      const r = await s[via]('GET', `${CMS}?resourceVersion=${old}&resourceVersionMatch=Exact`);
      expect([r.status, r.body.reason, r.body.message]).toEqual([410, 'Expired',
        'The resourceVersion for the provided list is too old.']);
      const n = await s[via]('GET',
        `${CMS}?resourceVersion=${old}&resourceVersionMatch=NotOlderThan`);
      expect(n.status).toBe(200);
    }
  });

  it('a list at an exact revision answers the objects as they were then', async () => {
    const at = s.rev();
    await s.req('POST', CMS, { metadata: { name: 'newer' } });
    const r = await s.req('GET', `${CMS}?resourceVersion=${at}&resourceVersionMatch=Exact`);
    expect(r.status).toBe(200);
    expect(r.body.metadata.resourceVersion).toBe(String(at));
    expect(r.body.items.map((i: any) => i.metadata.name)).not.toContain('newer');
  });
});

describe('a caller who may not make the call learns that first (403), not what was malformed',
  () => {
    it('options, Accept and bodies are refused only after authorization', async () => {
      const { buildTestServer } = await import('./helpers/server.js');
      const s = await buildTestServer({ authorizer: { authorize: async (a) =>
        ({ allowed: a.verb === 'get' || a.resource === 'namespaces', reason: '' }) } });
      try {
        const CM = '/api/v1/namespaces/default/configmaps';
        for (const [method, url, body, headers] of [
          ['POST', `${CM}?dryRun=Bogus`, { metadata: { name: 'x' } }, {}],
          ['POST', CM, '{not json', {}],
          ['POST', CM, { metadata: { name: 'x' } }, { accept: 'application/xml' }],
          ['GET', `${CM}?resourceVersion=abc`, undefined, {}],
          ['DELETE', `${CM}/x?propagationPolicy=Bogus`, undefined, {}],
        ] as const) {
          const r = await s.req(method, url, body, headers);
          expect([method, url, r.status, r.body.reason]).toEqual([method, url, 403, 'Forbidden']);
        }
        const allowed = await s.req('GET', `${CM}/x?resourceVersion=abc`);
        expect(allowed.status).toBe(400);
      } finally {
        await s.done();
      }
    });
  });

describe('watch options', () => {
  it('sendInitialEvents is refused (422) as upstream without WatchList, on both paths',
    async () => {
      const s = await buildAdmittedServer();
      try {
        for (const via of ['req', 'inject'] as const) {
          const r = await s[via]('GET', '/api/v1/namespaces/default/configmaps?watch=1&' +
            'sendInitialEvents=true&resourceVersionMatch=NotOlderThan');
          expect(r.status).toBe(422);
          expect(r.body.details.causes).toEqual([{ reason: 'FieldValueForbidden',
            field: 'sendInitialEvents', message: 'Forbidden: sendInitialEvents is forbidden ' +
            'for watch unless the WatchList feature gate is enabled' }]);
        }
      } finally {
        await s.done();
      }
    });
});

describe('watches of one object', () => {
  it('a named watch (?watch or /watch/ prefix) streams that object; another name is 400',
    async () => {
      const s = await buildAdmittedServer();
      try {
        await s.req('POST', CMS, { metadata: { name: 'a' } });
        await s.req('POST', CMS, { metadata: { name: 'b' } });
        for (const url of [`${CMS}/b?watch=1&timeoutSeconds=1`,
          '/api/v1/watch/namespaces/default/configmaps/b?timeoutSeconds=1']) {
          const r = await s.req('GET', url);
          const names = r.text.trim().split('\n').map((l) => JSON.parse(l).object.metadata.name);
          expect([url, names]).toEqual([url, ['b']]);
        }
        const bad = await s.req('GET', '/api/v1/watch/namespaces/default/configmaps/b?' +
          'fieldSelector=metadata.name%3Da');
        expect([bad.status, bad.body.message]).toEqual([400,
          "fieldSelector metadata.name doesn't match requested name"]);
        const post = await s.req('POST', '/api/v1/watch/namespaces/default/configmaps',
          { metadata: { name: 'w' } });
        expect(post.status).toBe(405);
      } finally {
        await s.done();
      }
    });
});
