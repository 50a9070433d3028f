import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAdmittedServer, type AdmittedServer } from './helpers/admitted-server.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const JSONP = { 'content-type': 'application/json-patch+json' };
const SMP = { 'content-type': 'application/strategic-merge-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

const polluted = () => ['polluted', 'x', 'yes'].filter((k) => k in Object.prototype ||
  k in Object || k in Function.prototype);

describe('request keys named __proto__, constructor or prototype are only field names', () => {
  let s: AdmittedServer;
  beforeAll(async () => {
    s = await buildAdmittedServer();
    await s.req('POST', CMS, { metadata: { name: 'c' }, data: { a: '1' } });
  });
  afterAll(async () => { await s.done(); });

  const hostile: Array<[string, Record<string, string>, unknown]> = [
    ['json add /__proto__/polluted', JSONP,
      [{ op: 'add', path: '/__proto__/polluted', value: 'yes' }]],
    ['json add /metadata/__proto__/polluted', JSONP,
      [{ op: 'add', path: '/metadata/__proto__/polluted', value: 'yes' }]],
    ['json add /constructor/prototype/polluted', JSONP,
      [{ op: 'add', path: '/constructor/prototype/polluted', value: 'yes' }]],
    ['json copy into /__proto__', JSONP,
      [{ op: 'copy', from: '/data', path: '/__proto__' }]],
    ['merge __proto__', MERGE, JSON.parse('{"__proto__":{"polluted":"yes"}}')],
    ['merge constructor.prototype', MERGE,
      { constructor: { prototype: { polluted: 'yes' } } }],
    ['strategic __proto__', SMP, JSON.parse('{"metadata":{"__proto__":{"polluted":"yes"}}}')],
    ['strategic $setElementOrder/__proto__', SMP,
      JSON.parse('{"$setElementOrder/__proto__":[{"x":"yes"}]}')],
    ['strategic $deleteFromPrimitiveList/constructor', SMP,
      { '$deleteFromPrimitiveList/constructor': ['x'] }],
  ];
  for (const [name, headers, body] of hostile) {
    it(`${name}: Object.prototype stays clean and the server keeps answering`, async () => {
      const r = await s.req('PATCH', `${CMS}/c`, body, headers);
      expect(r.status).toBeLessThan(500);
      expect(r.body.kind).toBeDefined();
      expect(polluted()).toEqual([]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const c = await s.req('GET', `${CMS}/c`);
      expect(c.status).toBe(200);
      expect(Object.getPrototypeOf(c.body)).toBe(Object.prototype);
    });
  }

  it('a ConfigMap key __proto__ set by a merge patch is stored as data', async () => {
    const r = await s.req('PATCH', `${CMS}/c`, '{"data":{"__proto__":"v","constructor":"w"}}',
      MERGE);
    expect(r.status).toBe(200);
    const c = await s.req('GET', `${CMS}/c`);
    expect(c.text).toContain('"__proto__":"v"');
    expect(c.body.data.constructor).toBe('w');
    expect(polluted()).toEqual([]);
  });

  it('apply with __proto__ keys and hostile managedFields keeps Object.prototype clean',
    async () => {
      const r = await s.req('PATCH', `${CMS}/c?fieldManager=t&force=true`,
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n' +
        '    __proto__: "yes"\ndata:\n  __proto__: "v"\n', APPLY);
      expect(r.status).toBeLessThan(500);
      const cur = (await s.req('GET', `${CMS}/c`)).body;
      const mf = [{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1',
        fieldsV1: JSON.parse('{"__proto__":{"polluted":{}},"f:data":{"k:{bad":{}}}') }];
      const put = await s.req('PUT', `${CMS}/c?fieldManager=u`, JSON.stringify(
        { ...cur, metadata: { ...cur.metadata, managedFields: mf }, data: { b: '2' } }));
      expect(put.status).toBeLessThan(500);
      const again = await s.req('PATCH', `${CMS}/c?fieldManager=m`,
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  z: "1"\n', APPLY);
      expect(again.status).toBeLessThan(500);
      expect(polluted()).toEqual([]);
    });
});
