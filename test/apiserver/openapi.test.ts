import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtoReader } from '../../src/apiserver/protobuf/wire.js';
import { buildDefaultCatalog } from '../../src/apiserver/resources.js';
import { buildTestServer } from './helpers/server.js';
import type { TestServer } from './helpers/server.js';

const PB_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

/** The fields of one protobuf message, by number (length-delimited values as bytes). */
function fields(buf: Uint8Array): Map<number, Uint8Array[]> {
  const r = new ProtoReader(buf);
  const out = new Map<number, Uint8Array[]>();
  while (!r.done) {
    const t = r.tag();
    if (t.wireType !== 2) { r.skip(t.wireType); continue; }
    out.set(t.field, [...(out.get(t.field) ?? []), r.bytes()]);
  }
  return out;
}
const text = (b: Uint8Array | undefined) => Buffer.from(b ?? []).toString('utf8');

describe('OpenAPI v3 and v2 with upstream schemas', () => {
  let s: TestServer;
  beforeAll(async () => { s = await buildTestServer(); });
  afterAll(async () => { await s.done(); });

  it('the v3 index lists one document per served group version, hashed as upstream (sha512)', async () => {
    const idx = await s.req('GET', '/openapi/v3');
    const catalog = buildDefaultCatalog();
    const keys = [...new Set(catalog.all.map((r) => r.group ? `apis/${r.group}/${r.version}`
      : `api/${r.version}`))].sort();
    expect(Object.keys(idx.body.paths).sort()).toEqual(keys);
    const url: string = idx.body.paths['api/v1'].serverRelativeURL;
    const hash = url.split('hash=')[1]!;
    expect(hash).toMatch(/^[0-9A-F]{128}$/);
    const doc = await s.req('GET', url);
    expect(doc.status).toBe(200);
    expect(createHash('sha512').update(doc.text).digest('hex').toUpperCase()).toBe(hash);
    expect(doc.headers).toMatchObject({ etag: `"${hash}"`, 'cache-control': 'public, immutable',
      vary: 'Accept', 'content-type': 'application/json' });
    expect(doc.body.openapi).toBe('3.0.0');
  });

  it('a stale hash is redirected to the current one; If-None-Match answers 304', async () => {
    const stale = await s.req('GET', '/openapi/v3/apis/apps/v1?hash=0123');
    expect(stale.status).toBe(301);
    const location = String(stale.headers.location);
    expect(location).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/);
    const fresh = await s.req('GET', location);
    expect(fresh.status).toBe(200);
    const again = await s.req('GET', '/openapi/v3/apis/apps/v1', undefined,
      { 'if-none-match': String(fresh.headers.etag) });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    const plain = await s.req('GET', '/openapi/v3/apis/apps/v1');
    expect(plain.headers['cache-control']).toBeUndefined();
    expect((await s.req('GET', '/openapi/v3/apis/nosuch/v1')).status).toBe(404);
    expect((await s.req('GET', '/openapi/v3/api/v1', undefined, { accept: 'text/html' })).status)
      .toBe(406);
  });

  it('every served kind has a schema carrying its group-version-kind', async () => {
    const catalog = buildDefaultCatalog();
    const idx = await s.req('GET', '/openapi/v3');
    for (const r of catalog.all) {
      const key = r.group ? `apis/${r.group}/${r.version}` : `api/${r.version}`;
      const doc = await s.req('GET', idx.body.paths[key].serverRelativeURL);
      const hit = Object.values(doc.body.components.schemas).some((x: any) =>
        (x['x-kubernetes-group-version-kind'] ?? []).some((g: any) =>
          g.group === r.group && g.version === r.version && g.kind === r.kind));
      expect(hit, `${key} ${r.kind}`).toBe(true);
    }
  });

  it('schemas keep upstream\'s patch strategies, merge keys, list types and int-or-string', async () => {
    const idx = await s.req('GET', '/openapi/v3');
    const core = await s.req('GET', idx.body.paths['api/v1'].serverRelativeURL);
    const schemas = core.body.components.schemas;
    expect(schemas['io.k8s.api.core.v1.PodSpec'].properties.containers).toMatchObject({
      'x-kubernetes-patch-merge-key': 'name', 'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] });
    expect(schemas['io.k8s.api.core.v1.Container'].properties.ports).toMatchObject({
      'x-kubernetes-patch-merge-key': 'containerPort', 'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-list-map-keys': ['containerPort', 'protocol'] });
    expect(schemas['io.k8s.api.core.v1.Container'].properties.env).toMatchObject({
      'x-kubernetes-patch-merge-key': 'name', 'x-kubernetes-patch-strategy': 'merge' });
    expect(schemas['io.k8s.apimachinery.pkg.util.intstr.IntOrString'].format).toBe('int-or-string');
    const op = core.body.paths['/api/v1/namespaces/{namespace}/pods/{name}'].patch;
    expect(op['x-kubernetes-group-version-kind']).toEqual({ group: '', version: 'v1', kind: 'Pod' });
    expect(op.parameters.map((p: any) => p.name)).toContain('fieldValidation');
  });

  it('documents hold paths of served resources only', async () => {
    const idx = await s.req('GET', '/openapi/v3');
    const core = await s.req('GET', idx.body.paths['api/v1'].serverRelativeURL);
    const paths = Object.keys(core.body.paths);
    expect(paths).toContain('/api/v1/namespaces/{namespace}/pods/{name}/status');
    expect(paths).toContain('/api/v1/namespaces/{name}');
    expect(paths.some((p) => p.includes('replicationcontrollers'))).toBe(false);
    expect(paths.some((p) => p.includes('limitranges'))).toBe(false);
    // Subresources only where served: pods/resize is upstream's, not kdp's.
    expect(paths).toContain('/api/v1/namespaces/{namespace}/pods/{name}/eviction');
    expect(paths).toContain('/api/v1/namespaces/{name}/finalize');
    expect(paths.some((p) => p.endsWith('/pods/{name}/resize'))).toBe(false);
    expect(core.body.components.schemas['io.k8s.api.core.v1.ReplicationController']).toBeUndefined();
  });

  it('/openapi/v2 answers Swagger JSON with definitions, and gnostic protobuf', async () => {
    const json = await s.req('GET', '/openapi/v2', undefined, { accept: 'application/json' });
    expect(json.status).toBe(200);
    expect(json.body.swagger).toBe('2.0');
    const defs = json.body.definitions;
    expect(defs['io.k8s.api.core.v1.PodSpec'].properties.containers.items)
      .toEqual({ $ref: '#/definitions/io.k8s.api.core.v1.Container' });
    expect(defs['io.k8s.apimachinery.pkg.util.intstr.IntOrString'])
      .toMatchObject({ type: 'string', format: 'int-or-string' });
    const patch = json.body.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch;
    expect(patch.parameters.find((p: any) => p.in === 'body').schema)
      .toEqual({ $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' });
    expect(patch.parameters.find((p: any) => p.name === 'fieldValidation'))
      .toMatchObject({ in: 'query', type: 'string' });

    const pb = await s.app.inject({ method: 'GET', url: '/openapi/v2', headers: { accept: PB_ACCEPT } });
    expect(pb.statusCode).toBe(200);
    expect(pb.headers['content-type'])
      .toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const doc = fields(pb.rawPayload);
    expect(text(doc.get(1)?.[0])).toBe('2.0');
    const named = fields(doc.get(9)![0]!).get(1)!;
    expect(named.length).toBe(Object.keys(defs).length);
    const pod = named.map(fields).find((n) => text(n.get(1)?.[0]) === 'io.k8s.api.core.v1.Pod')!;
    const exts = fields(pod.get(2)![0]!).get(31)!.map(fields);
    const gvk = exts.find((e) => text(e.get(1)?.[0]) === 'x-kubernetes-group-version-kind')!;
    expect(JSON.parse(text(fields(gvk.get(2)![0]!).get(2)?.[0])))
      .toEqual([{ group: '', kind: 'Pod', version: 'v1' }]);
    expect((await s.req('GET', '/openapi/v2', undefined, { accept: 'text/plain' })).status).toBe(406);
  });
});
