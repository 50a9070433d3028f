import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestServer, TABLE_ACCEPT } from './helpers/server.js';
import type { TestServer } from './helpers/server.js';
import { humanDuration } from '../../src/apiserver/table/duration.js';

describe('discovery, OpenAPI and version', () => {
  let s: TestServer;
  beforeAll(async () => { s = await buildTestServer(); });
  afterAll(async () => { await s.done(); });

  it('legacy discovery lists groups and resources with subresources', async () => {
    const api = await s.req('GET', '/api');
    expect(api.body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const apis = await s.req('GET', '/apis');
    expect(apis.body.groups.map((g: any) => g.name)).toContain('apps');
    const apps = await s.req('GET', '/apis/apps/v1');
    const scale = apps.body.resources.find((r: any) => r.name === 'deployments/scale');
    expect(scale).toMatchObject({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
    const deploy = apps.body.resources.find((r: any) => r.name === 'deployments');
    expect(deploy).toMatchObject({ namespaced: true, shortNames: ['deploy'], categories: ['all'] });
    expect((await s.req('GET', '/apis/apps')).body)
      .toMatchObject({ kind: 'APIGroup', name: 'apps' });
  });

  it('aggregated discovery answers v2 and v2beta1 with the matching Content-Type', async () => {
    for (const v of ['v2', 'v2beta1']) {
      const r = await s.req('GET', '/apis', undefined, { accept:
        `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList,` +
        'application/json' });
      expect(String(r.headers['content-type'])).toMatch(new RegExp(`v="?${v}"?(;|$)`));
      expect(r.body.kind).toBe('APIGroupDiscoveryList');
      const apps = r.body.items.find((i: any) => i.metadata.name === 'apps');
      const d = apps.versions[0].resources.find((x: any) => x.resource === 'deployments');
      expect(d.subresources.map((x: any) => x.subresource)).toEqual(['scale', 'status']);
    }
    const core = await s.req('GET', '/api', undefined, { accept:
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
    expect(core.body.items[0].versions[0].resources.map((x: any) => x.resource)).toContain('pods');
  });

  it('OpenAPI v3 declares fieldValidation on every kind\'s PATCH', async () => {
    const idx = await s.req('GET', '/openapi/v3');
    const url = idx.body.paths['apis/apps/v1'].serverRelativeURL;
    expect(url).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=/);
    const doc = await s.req('GET', url);
    const op = doc.body.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch;
    expect(op['x-kubernetes-group-version-kind']).toEqual({ group: 'apps', version: 'v1',
      kind: 'Deployment' });
    expect(op.parameters.map((p: any) => p.name)).toContain('fieldValidation');
  });

  it('/version reports a v1.33 server and health endpoints answer ok', async () => {
    const v = await s.req('GET', '/version');
    expect(v.body).toMatchObject({ major: '1', minor: '33' });
    expect(v.body.gitVersion).toMatch(/^v1\.33\./);
    for (const p of ['/healthz', '/readyz', '/livez']) {
      expect((await s.req('GET', p)).text).toBe('ok');
    }
  });
});

describe('server-side Tables', () => {
  let s: TestServer;
  beforeAll(async () => { s = await buildTestServer(); });
  afterAll(async () => { await s.done(); });

  it('pods get NAME READY STATUS RESTARTS AGE and wide columns, rows carry metadata', async () => {
    await s.req('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'p',
      labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } });
    const t = await s.req('GET', '/api/v1/pods', undefined, { accept: TABLE_ACCEPT });
    expect(t.body.kind).toBe('Table');
    expect(t.body.columnDefinitions.map((c: any) => [c.name, c.priority])).toEqual([
      ['Name', 0], ['Ready', 0], ['Status', 0], ['Restarts', 0], ['Age', 0], ['IP', 1],
      ['Node', 1], ['Nominated Node', 1], ['Readiness Gates', 1]]);
    const row = t.body.rows[0];
    expect(row.cells.slice(0, 4)).toEqual(['p', '0/1', 'Pending', 0]);
    expect(row.object).toMatchObject({ kind: 'PartialObjectMetadata',
      metadata: { name: 'p', namespace: 'default', labels: { a: 'b' } } });
    const full = await s.req('GET', '/api/v1/pods?includeObject=Object', undefined,
      { accept: TABLE_ACCEPT });
    expect(full.body.rows[0].object.kind).toBe('Pod');
  });

  it('services print type, cluster IP, external IP and ports with node ports', async () => {
    await s.req('POST', '/api/v1/namespaces/default/services', { metadata: { name: 's' },
      spec: { type: 'NodePort', selector: { app: 'x' },
        ports: [{ port: 80, targetPort: 8080, nodePort: 30080 }] } });
    const t = await s.req('GET', '/api/v1/namespaces/default/services/s', undefined,
      { accept: TABLE_ACCEPT });
    const cells = t.body.rows[0].cells;
    expect(cells[1]).toBe('NodePort');
    expect(cells[3]).toBe('<none>');
    expect(cells[4]).toBe('80:30080/TCP');
    expect(cells[6]).toBe('app=x');
  });

  it('ages follow HumanDuration', () => {
    expect(humanDuration(5_000)).toBe('5s');
    expect(humanDuration(150_000)).toBe('2m30s');
    expect(humanDuration(30 * 60_000)).toBe('30m');
    expect(humanDuration(5 * 3600_000 + 60_000)).toBe('5h1m');
    expect(humanDuration(30 * 3600_000)).toBe('30h');
    expect(humanDuration(3 * 86400_000 + 3600_000)).toBe('3d1h');
    expect(humanDuration(100 * 86400_000)).toBe('100d');
  });
});
