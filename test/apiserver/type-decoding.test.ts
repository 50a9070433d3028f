// Values of the wrong type are refused by every write verb before anything is stored, with
// upstream's Status: create and update 400 "<Kind> in version "v1" cannot be handled as a
// <Kind>: <Go decoder message>", JSON/merge/strategic patches 422 Invalid on field `patch`,
// server-side apply 400; and Secret stringData is merged into data, as upstream's conversion.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestServer, deployment } from './helpers/server.js';
import type { TestServer } from './helpers/server.js';

const NS = '/api/v1/namespaces/default';
const APPS = '/apis/apps/v1/namespaces/default';

interface Kind { url: string; make(name: string): Record<string, any> }

const KINDS: Record<string, Kind> = {
  ConfigMap: { url: `${NS}/configmaps`, make: (name) => ({ apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name }, data: { k: 'v' } }) },
  Secret: { url: `${NS}/secrets`, make: (name) => ({ apiVersion: 'v1', kind: 'Secret',
    metadata: { name }, data: { k: 'dg==' } }) },
  Deployment: { url: `${APPS}/deployments`, make: (name) => deployment(name) },
  Service: { url: `${NS}/services`, make: (name) => ({ apiVersion: 'v1', kind: 'Service',
    metadata: { name }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } }) },
  Pod: { url: `${NS}/pods`, make: (name) => ({ apiVersion: 'v1', kind: 'Pod',
    metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }) },
};

/** `1e400` cannot be written from JavaScript: such a value is spliced into the JSON text. */
const HUGE = Symbol('1e400');

interface Bad {
  kind: keyof typeof KINDS;
  /** Dotted path; numeric segments index arrays. */
  path: string;
  value: unknown;
  /** The Go decoder's message (create/update carry it after "cannot be handled as"). */
  go: string;
  /** The cause's field path. */
  field: string;
}

const BAD: Bad[] = [
  { kind: 'ConfigMap', path: 'data', value: ['a'], field: 'data',
    go: 'json: cannot unmarshal array into Go struct field ConfigMap.data of type ' +
      'map[string]string' },
  { kind: 'ConfigMap', path: 'data', value: 5, field: 'data',
    go: 'json: cannot unmarshal number into Go struct field ConfigMap.data of type ' +
      'map[string]string' },
  { kind: 'ConfigMap', path: 'data.k', value: 1, field: 'data[k]',
    go: 'json: cannot unmarshal number into Go struct field ConfigMap.data of type string' },
  { kind: 'ConfigMap', path: 'binaryData', value: { b: 'abc' }, field: 'binaryData[b]',
    go: 'illegal base64 data at input byte 0' },
  { kind: 'ConfigMap', path: 'binaryData', value: { b: 'aGVsbG8=!' }, field: 'binaryData[b]',
    go: 'illegal base64 data at input byte 8' },
  { kind: 'ConfigMap', path: 'metadata.labels', value: { a: 1 }, field: 'metadata.labels[a]',
    go: 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of ' +
      'type string' },
  { kind: 'Secret', path: 'data.k', value: 'not base64!!', field: 'data[k]',
    go: 'illegal base64 data at input byte 3' },
  { kind: 'Secret', path: 'stringData', value: { s: 5 }, field: 'stringData[s]',
    go: 'json: cannot unmarshal number into Go struct field Secret.stringData of type string' },
  { kind: 'Deployment', path: 'spec.replicas', value: 1.5, field: 'spec.replicas',
    go: 'json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas ' +
      'of type int32' },
  { kind: 'Deployment', path: 'spec.replicas', value: '3', field: 'spec.replicas',
    go: 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of ' +
      'type int32' },
  { kind: 'Deployment', path: 'spec.replicas', value: 2 ** 31, field: 'spec.replicas',
    go: 'json: cannot unmarshal number 2147483648 into Go struct field ' +
      'DeploymentSpec.spec.replicas of type int32' },
  { kind: 'Deployment', path: 'spec.replicas', value: -(2 ** 31) - 1, field: 'spec.replicas',
    go: 'json: cannot unmarshal number -2147483649 into Go struct field ' +
      'DeploymentSpec.spec.replicas of type int32' },
  { kind: 'Deployment', path: 'spec.replicas', value: HUGE, field: 'spec.replicas',
    go: 'json: cannot unmarshal number into Go struct field DeploymentSpec.spec.replicas of ' +
      'type int32' },
  { kind: 'Deployment', path: 'spec.template.spec.containers', value: { name: 'c' },
    field: 'spec.template.spec.containers',
    go: 'json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.' +
      'containers of type []v1.Container' },
  { kind: 'Service', path: 'spec.selector', value: ['app'], field: 'spec.selector',
    go: 'json: cannot unmarshal array into Go struct field ServiceSpec.spec.selector of type ' +
      'map[string]string' },
  { kind: 'Service', path: 'spec.sessionAffinityConfig', value: { clientIP:
    { timeoutSeconds: 'abc' } }, field: 'spec.sessionAffinityConfig.clientIP.timeoutSeconds',
  go: 'json: cannot unmarshal string into Go struct field ClientIPConfig.spec.' +
      'sessionAffinityConfig.clientIP.timeoutSeconds of type int32' },
  { kind: 'Service', path: 'spec.ports.0.targetPort', value: 1.5,
    field: 'spec.ports[0].targetPort',
    go: 'json: cannot unmarshal number 1.5 into Go struct field ServicePort.spec.ports.' +
      'targetPort of type int32' },
  { kind: 'Pod', path: 'spec.containers', value: { name: 'c' }, field: 'spec.containers',
    go: 'json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type ' +
      '[]v1.Container' },
];

function setPath(o: Record<string, any>, path: string, value: unknown): Record<string, any> {
  const segs = path.split('.');
  let cur: any = o;
  for (const s of segs.slice(0, -1)) cur = cur[s] ??= {};
  cur[segs[segs.length - 1]!] = value;
  return o;
}

/** JSON text, with HUGE written as the literal 1e400. */
function json(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (x === HUGE ? '__HUGE__' : x))
    .replace('"__HUGE__"', '1e400');
}

/** A merge/strategic patch that sets the one field (lists are sent whole, as merge does). */
function mergePatch(t: Bad, name: string): Record<string, any> {
  const m = /^(.*?)\.(\d+)\./.exec(t.path);
  if (!m) return setPath({}, t.path, t.value);
  const full = setPath(KINDS[t.kind]!.make(name), t.path, t.value);
  return setPath({}, m[1]!, m[1]!.split('.').reduce((o: any, s) => o[s], full));
}

describe('values of the wrong type are refused before anything is stored', () => {
  let s: TestServer;
  beforeEach(async () => { s = await buildTestServer(); });
  afterEach(async () => { await s.done(); });

  const send = (method: string, url: string, body: unknown, type = 'application/json') =>
    s.req(method, url, json(body), { 'content-type': type });

  for (const t of BAD) {
    const label = `${t.kind} ${t.path} = ${String(t.value === HUGE ? '1e400' :
      JSON.stringify(t.value))}`;
    const k = KINDS[t.kind]!;

    it(`create and update answer 400 naming ${t.field}: ${label}`, async () => {
      const created = await s.req('POST', k.url, k.make('x'));
      expect(created.status).toBe(201);
      const rev = s.store.currentRevision();
      const want = `${t.kind} in version "v1" cannot be handled as a ${t.kind}: ${t.go}`;
      for (const [method, url] of [['POST', k.url], ['PUT', `${k.url}/x`]] as const) {
        const r = await send(method, url, setPath(k.make(method === 'POST' ? 'y' : 'x'),
          t.path, t.value));
        expect(r.status, method).toBe(400);
        expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: want,
          details: { causes: [{ field: t.field, reason: 'FieldValueTypeInvalid' }] } });
      }
      expect(s.store.currentRevision()).toBe(rev);
      expect((await s.req('GET', `${k.url}/y`)).status).toBe(404);
      expect((await s.req('GET', `${k.url}/x`)).body).toEqual(created.body);
    });

    it(`every patch type refuses it with the field named: ${label}`, async () => {
      const created = await s.req('POST', k.url, k.make('x'));
      const rev = s.store.currentRevision();
      const url = `${k.url}/x`;
      const patches: Array<[string, unknown]> = [
        ['application/merge-patch+json', mergePatch(t, 'x')],
        ['application/strategic-merge-patch+json', mergePatch(t, 'x')],
        ['application/json-patch+json',
          [{ op: 'add', path: `/${t.path.split('.').join('/')}`, value: t.value }]],
      ];
      for (const [type, body] of patches) {
        const r = await send('PATCH', url, body, type);
        if (t.value === HUGE && type.includes('strategic')) {
          // The strategic patch itself does not decode: 400 while reading it.
          expect(r.status, type).toBe(400);
          expect(r.body.message).toContain(t.go);
          continue;
        }
        expect(r.status, type).toBe(422);
        expect(r.body.reason).toBe('Invalid');
        expect(r.body.details.causes).toEqual([expect.objectContaining({ field: 'patch' })]);
        expect(r.body.message).toMatch(/^ "" is invalid: patch: Invalid value: "/);
        expect(r.body.message.endsWith(`: ${t.go}`), r.body.message).toBe(true);
      }
      const apply = await send('PATCH', `${url}?fieldManager=t&force=true`,
        setPath(k.make('x'), t.path, t.value), 'application/apply-patch+yaml');
      expect(apply.status).toBe(400);
      expect(apply.body.message).toContain(t.go);
      expect(s.store.currentRevision()).toBe(rev);
      expect((await s.req('GET', url)).body).toEqual(created.body);
    });
  }

  it('int32 bounds: 2^31-1 and -2^31 decode (validation then judges them)', async () => {
    const k = KINDS.Deployment!;
    const max = await s.req('POST', k.url, setPath(k.make('max'), 'spec.replicas', 2 ** 31 - 1));
    expect(max.status).toBe(201);
    expect(max.body.spec.replicas).toBe(2 ** 31 - 1);
    const min = await s.req('POST', k.url, setPath(k.make('min'), 'spec.replicas', -(2 ** 31)));
    expect(min.status).toBe(422);
    expect(min.body.details.causes[0].field).toBe('spec.replicas');
  });

  it('the scale subresource refuses a replicas of the wrong type on PUT and patch', async () => {
    const k = KINDS.Deployment!;
    await s.req('POST', k.url, k.make('web'));
    const rev = s.store.currentRevision();
    const scale = (await s.req('GET', `${k.url}/web/scale`)).body;
    const put = await s.req('PUT', `${k.url}/web/scale`, { ...scale, spec: { replicas: '3' } });
    expect(put.status).toBe(400);
    expect(put.body.message).toBe('Scale in version "v1" cannot be handled as a Scale: json: ' +
      'cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32');
    const patch = await s.req('PATCH', `${k.url}/web/scale`, { spec: { replicas: 1.5 } },
      { 'content-type': 'application/merge-patch+json' });
    expect(patch.status).toBe(422);
    expect(patch.body.message).toContain('json: cannot unmarshal number 1.5 into Go struct ' +
      'field ScaleSpec.spec.replicas of type int32');
    expect(s.store.currentRevision()).toBe(rev);
    const ok = await s.req('PATCH', `${k.url}/web/scale`, { spec: { replicas: 3 } },
      { 'content-type': 'application/merge-patch+json' });
    expect(ok.status).toBe(200);
    expect((await s.req('GET', `${k.url}/web`)).body.spec.replicas).toBe(3);
  });

  it('binding and eviction bodies of the wrong type are 400 and change nothing', async () => {
    const pods = KINDS.Pod!.url;
    const created = (await s.req('POST', pods, KINDS.Pod!.make('p'))).body;
    const rev = s.store.currentRevision();
    const bind = await s.req('POST', `${pods}/p/binding`, { target: { name: 5 } });
    expect(bind.status).toBe(400);
    expect(bind.body.message).toBe('Binding in version "v1" cannot be handled as a Binding: ' +
      'json: cannot unmarshal number into Go struct field ObjectReference.target.name of type ' +
      'string');
    const evict = await s.req('POST', `${pods}/p/eviction`,
      { apiVersion: 'policy/v1', kind: 'Eviction', deleteOptions: { gracePeriodSeconds: 'a' } });
    expect(evict.status).toBe(400);
    expect(evict.body.message).toContain('Go struct field DeleteOptions.deleteOptions.' +
      'gracePeriodSeconds of type int64');
    expect(s.store.currentRevision()).toBe(rev);
    expect((await s.req('GET', `${pods}/p`)).body).toEqual(created);
  });

  it('a status write of the wrong type is refused too', async () => {
    const k = KINDS.Deployment!;
    const d = (await s.req('POST', k.url, k.make('web'))).body;
    const rev = s.store.currentRevision();
    const r = await s.req('PUT', `${k.url}/web/status`, { ...d, status: { replicas: 'two' } });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('Go struct field DeploymentStatus.status.replicas of ' +
      'type int32');
    expect(s.store.currentRevision()).toBe(rev);
  });

  it('unknown top-level and metadata fields are dropped, as Go\'s decoder drops them', async () => {
    const url = KINDS.ConfigMap!.url;
    const text = '{"metadata":{"name":"u","__proto__":{"p":"x"},"bogus":1},"data":{"k":"v"},' +
      '"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"p":1}},"extra":true}';
    const r = await s.req('POST', url, text);
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(['apiVersion', 'data', 'kind', 'metadata']);
    expect(Object.hasOwn(r.body.metadata, '__proto__')).toBe(false);
    expect(r.body.metadata.bogus).toBeUndefined();
    const rev = s.store.currentRevision();
    const p = await s.req('PATCH', `${url}/u`, '{"__proto__":{"polluted":"yes"}}',
      { 'content-type': 'application/merge-patch+json' });
    expect(p.status).toBe(200);
    expect(s.store.currentRevision()).toBe(rev);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('nulls decode as Go decodes them: a map value is "", a struct field is unset', async () => {
    const r = await s.req('POST', KINDS.ConfigMap!.url, { metadata: { name: 'n',
      labels: { a: null } }, data: { k: null }, immutable: null });
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({ k: '' });
    expect(r.body.metadata.labels).toEqual({ a: '' });
    expect('immutable' in r.body).toBe(false);
  });
});

describe('Secret stringData is merged into data and never stored', () => {
  let s: TestServer;
  beforeEach(async () => { s = await buildTestServer(); });
  afterEach(async () => { await s.done(); });

  const b64 = (x: string) => Buffer.from(x).toString('base64');
  const url = `${NS}/secrets`;

  it('on create its values overwrite data\'s, base64-encoded', async () => {
    const r = await s.req('POST', url, { metadata: { name: 's' },
      data: { a: b64('old'), keep: b64('k') }, stringData: { a: 'new', b: 'ünï' } });
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({ a: b64('new'), keep: b64('k'), b: b64('ünï') });
    expect(r.body.stringData).toBeUndefined();
    expect((await s.req('GET', `${url}/s`)).body.stringData).toBeUndefined();
  });

  it('on update, merge patch and apply', async () => {
    const created = (await s.req('POST', url, { metadata: { name: 's' },
      data: { a: b64('1') } })).body;
    const put = await s.req('PUT', `${url}/s`, { ...created, stringData: { a: '2' } });
    expect(put.body.data).toEqual({ a: b64('2') });
    const merge = await s.req('PATCH', `${url}/s`, { stringData: { b: '3' } },
      { 'content-type': 'application/merge-patch+json' });
    expect(merge.body.data).toEqual({ a: b64('2'), b: b64('3') });
    const apply = await s.req('PATCH', `${url}/s?fieldManager=t`,
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { c: '4' } },
      { 'content-type': 'application/apply-patch+yaml' });
    expect(apply.status).toBe(200);
    expect(apply.body.data.c).toBe(b64('4'));
    const stored = (await s.req('GET', `${url}/s`)).body;
    expect(stored.stringData).toBeUndefined();
  });

  it('its keys are validated as data keys', async () => {
    const r = await s.req('POST', url, { metadata: { name: 's' }, stringData: { 'a b': 'x' } });
    expect(r.status).toBe(422);
    expect(r.body.details.causes[0].field).toBe('data[a b]');
  });
});
