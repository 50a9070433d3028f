// JSON resource requests on a listening server take the fast lane in front of Fastify; these
// check it answers as the Fastify route does (inject() tests never reach the lane).
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_USER } from '../../src/apiserver/app.js';
import { kdpError } from '../../src/errors.js';
import type { Authenticator } from '../../src/apiserver/pipeline-types.js';
import { listenApiServer } from '../../src/apiserver/serve.js';
import type { ListeningServer } from '../../src/apiserver/serve.js';
import { buildMemoryStore } from '../../src/store/index.js';
import type { StoreBackend } from '../../src/store/types.js';

interface Res { status: number; headers: Record<string, unknown>; text: string; body: any }

/** `x-token: good` is the admin, `x-token: bad` is rejected, no header is anonymous (401). */
const authenticator: Authenticator = {
  authenticate: (req) => {
    if (req.headers['x-token'] === 'bad') throw kdpError('KDP_UNAUTHORIZED', 'Unauthorized');
    return req.headers['x-token'] === 'good' ? ADMIN_USER : null;
  },
};

describe('the fast lane answers JSON resource requests as the Fastify route does', () => {
  let srv: ListeningServer;
  let store: StoreBackend;
  const send = (method: string, path: string, body?: string | Buffer,
    headers: Record<string, string> = { 'x-token': 'good' }): Promise<Res> =>
    new Promise((resolve, reject) => {
      const h: Record<string, string | number> = { ...headers };
      if (body !== undefined) {
        h['content-type'] ??= 'application/json';
        h['content-length'] = Buffer.byteLength(body);
      }
      const req = request(`${srv.url}${path}`, { method, headers: h }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => { text += d; });
        res.on('end', () => {
          let parsed: unknown;
          try { parsed = JSON.parse(text); } catch { parsed = undefined; }
          resolve({ status: res.statusCode!, headers: res.headers, text, body: parsed });
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  const json = (v: unknown) => JSON.stringify(v);

  beforeAll(async () => {
    store = buildMemoryStore();
    srv = await listenApiServer({ store, authenticator, anonymous: false, bodyLimit: 64 * 1024 },
      { port: 0, insecureHttp: true });
    await send('POST', '/api/v1/namespaces', json({ metadata: { name: 'default' } }));
  });
  afterAll(async () => { await srv.close(); await store.close(); });

  it('a create answers 201 with the stored object and resourceVersion as a get does', async () => {
    const c = await send('POST', '/api/v1/namespaces/default/configmaps',
      json({ metadata: { name: 'a', labels: { x: '1' } }, data: { k: 'v' } }));
    expect(c.status).toBe(201);
    expect(c.headers['content-type']).toBe('application/json');
    expect(c.headers['content-length']).toBe(String(Buffer.byteLength(c.text)));
    expect(c.body).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: 'a', namespace: 'default', labels: { x: '1' } }, data: { k: 'v' } });
    const rv = c.body.metadata.resourceVersion;
    expect(rv).toBe(String(store.currentRevision()));
    const g = await send('GET', '/api/v1/namespaces/default/configmaps/a');
    expect(g.status).toBe(200);
    expect(g.body).toEqual(c.body);
    const l = await send('GET', '/api/v1/namespaces/default/configmaps');
    expect(l.body.items).toEqual([c.body]);
  });

  it('updates, patches and deletes answer as before', async () => {
    await send('POST', '/api/v1/namespaces/default/configmaps', json({ metadata: { name: 'u' } }));
    const u = await send('PUT', '/api/v1/namespaces/default/configmaps/u',
      json({ metadata: { name: 'u' }, data: { a: '1' } }));
    expect(u.status).toBe(200);
    expect(u.body.data).toEqual({ a: '1' });
    const p = await send('PATCH', '/api/v1/namespaces/default/configmaps/u',
      json({ data: { b: '2' } }), { 'x-token': 'good',
        'content-type': 'application/merge-patch+json' });
    expect(p.body.data).toEqual({ a: '1', b: '2' });
    expect(Number(p.body.metadata.resourceVersion))
      .toBeGreaterThan(Number(u.body.metadata.resourceVersion));
    expect((await send('DELETE', '/api/v1/namespaces/default/configmaps/u')).status).toBe(200);
    const gone = await send('GET', '/api/v1/namespaces/default/configmaps/u');
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'NotFound',
      message: 'configmaps "u" not found', code: 404 });
  });

  it('errors are Statuses: bad JSON 400, body over the limit 413, no credentials 401', async () => {
    const bad = await send('POST', '/api/v1/namespaces/default/configmaps', '{"metadata":');
    expect(bad.status).toBe(400);
    expect(bad.body.kind).toBe('Status');
    const big = await send('POST', '/api/v1/namespaces/default/configmaps',
      json({ metadata: { name: 'big' }, data: { k: 'x'.repeat(100 * 1024) } }));
    expect(big.status).toBe(413);
    expect(big.body.reason).toBe('RequestEntityTooLarge');
    const anon = await send('GET', '/api/v1/namespaces/default/configmaps', undefined, {});
    expect(anon.status).toBe(401);
    const wrong = await send('GET', '/api/v1/namespaces/default/configmaps', undefined,
      { 'x-token': 'bad' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.kind).toBe('Status');
    const unknown = await send('GET', '/api/v1/namespaces/default/widgets');
    expect(unknown.status).toBe(404);
  });

  it('tables and watches still go through Fastify', async () => {
    const t = await send('GET', '/api/v1/namespaces/default/configmaps', undefined,
      { 'x-token': 'good', accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    expect(t.body.kind).toBe('Table');
    const w = await send('GET',
      '/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1&timeoutSeconds=1');
    expect(w.status).toBe(200);
    const lines = w.text.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((e) => e.object.metadata.name)).toContain('a');
  });
});
