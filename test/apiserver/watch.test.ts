import { request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WatchEvent } from '../../src/client/types.js';
import { ADMIN_USER } from '../../src/apiserver/app.js';
import { listenApiServer } from '../../src/apiserver/serve.js';
import { buildMemoryStore } from '../../src/store/index.js';
import { buildTestServer } from './helpers/server.js';
import type { TestServer } from './helpers/server.js';

const CM = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };
const ctx = { user: ADMIN_USER };

function collector() {
  const events: WatchEvent[] = [];
  let closed = false;
  const waiters: Array<() => void> = [];
  const sink = {
    onEvent: (e: WatchEvent) => { events.push(e); waiters.splice(0).forEach((w) => w()); },
    onClose: () => { closed = true; waiters.splice(0).forEach((w) => w()); },
  };
  const until = async (pred: () => boolean) => {
    while (!pred()) await new Promise<void>((r) => waiters.push(r));
  };
  return { events, sink, until, get closed() { return closed; } };
}

const names = (evs: WatchEvent[]) => evs.map((e) => `${e.type}:${e.object.metadata.name ?? ''}`);

describe('watch', () => {
  let s: TestServer;
  beforeEach(async () => { s = await buildTestServer({ bookmarkIntervalMs: 20 }); });
  afterEach(async () => { await s.done(); });
  const mk = (name: string, labels: Record<string, string> = {}) =>
    s.req('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name, labels } });

  it('resourceVersion 0 sends synthetic ADDED events for current objects first', async () => {
    await mk('a');
    await mk('b');
    const c = collector();
    const h = await s.service.watch(ctx, CM, { resourceVersion: '0' }, c.sink);
    await mk('c');
    await c.until(() => c.events.length >= 3);
    expect(names(c.events)).toEqual(['ADDED:a', 'ADDED:b', 'ADDED:c']);
    h.stop();
  });

  it('from a list resourceVersion only later changes are sent', async () => {
    await mk('a');
    const list = await s.req('GET', '/api/v1/namespaces/default/configmaps');
    const c = collector();
    const rv = list.body.metadata.resourceVersion;
    const h = await s.service.watch(ctx, CM, { resourceVersion: rv }, c.sink);
    await s.req('PATCH', '/api/v1/namespaces/default/configmaps/a', { data: { x: '1' } },
      { 'content-type': 'application/merge-patch+json' });
    await s.req('DELETE', '/api/v1/namespaces/default/configmaps/a');
    await c.until(() => c.events.length >= 2);
    expect(names(c.events)).toEqual(['MODIFIED:a', 'DELETED:a']);
    h.stop();
  });

  it('an object leaving the selector is DELETED, one entering it is ADDED', async () => {
    await mk('a', { app: 'x' });
    const c = collector();
    const h = await s.service.watch(ctx, CM, { labelSelector: 'app=x' }, c.sink);
    const set = (v: string | null) => s.req('PATCH', '/api/v1/namespaces/default/configmaps/a',
      { metadata: { labels: { app: v } } }, { 'content-type': 'application/merge-patch+json' });
    await set('y');
    await set('x');
    await c.until(() => c.events.length >= 3);
    expect(names(c.events)).toEqual(['ADDED:a', 'DELETED:a', 'ADDED:a']);
    h.stop();
  });

  it('a DELETED event reaches a metadata.name field-selector watcher', async () => {
    await mk('a');
    await mk('b');
    const c = collector();
    const h = await s.service.watch(ctx, CM, { fieldSelector: 'metadata.name=b' }, c.sink);
    await s.req('DELETE', '/api/v1/namespaces/default/configmaps/a');
    await s.req('DELETE', '/api/v1/namespaces/default/configmaps/b');
    await c.until(() => c.events.length >= 2);
    expect(names(c.events)).toEqual(['ADDED:b', 'DELETED:b']);
    h.stop();
  });

  it('a compacted resourceVersion ends the watch with an ERROR 410 Expired event', async () => {
    await mk('a');
    const old = String(s.store.currentRevision());
    await mk('b');
    await mk('c');
    await s.store.compact(s.store.currentRevision());
    const c = collector();
    await s.service.watch(ctx, CM, { resourceVersion: '1' }, c.sink);
    await c.until(() => c.closed);
    expect(c.events).toHaveLength(1);
    expect(c.events[0]!.type).toBe('ERROR');
    expect(c.events[0]!.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    void old;
  });

  it('bookmarks carry only kind, apiVersion and resourceVersion when asked for', async () => {
    const c = collector();
    const h = await s.service.watch(ctx, CM, { resourceVersion: String(s.store.currentRevision()),
      allowWatchBookmarks: true }, c.sink);
    await c.until(() => c.events.length >= 1);
    expect(c.events[0]).toEqual({ type: 'BOOKMARK', object: { kind: 'ConfigMap', apiVersion: 'v1',
      metadata: { resourceVersion: String(s.store.currentRevision()) } } });
    h.stop();
  });

  it('timeoutSeconds closes the watch from the server side', async () => {
    const c = collector();
    await s.service.watch(ctx, CM, { timeoutSeconds: 1 }, c.sink);
    await c.until(() => c.closed);
    expect(c.closed).toBe(true);
  });
});

describe('watch over HTTP', () => {
  it('streams newline-delimited events, Tables when asked, on a chunked response', async () => {
    const store = buildMemoryStore();
    const srv = await listenApiServer({ store }, { port: 0, insecureHttp: true });
    try {
      const post = (name: string) => fetch(`${srv.url}/api/v1/namespaces`, { method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name } }) });
      await post('one');
      const lines: string[] = [];
      await new Promise<void>((resolve, reject) => {
        const req = request(`${srv.url}/api/v1/namespaces?watch=true&timeoutSeconds=5`,
          { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } }, (res) => {
            expect(res.statusCode).toBe(200);
            expect(res.headers['transfer-encoding']).toBe('chunked');
            let buf = '';
            res.on('data', (d: Buffer) => {
              buf += d.toString();
              const parts = buf.split('\n');
              buf = parts.pop()!;
              lines.push(...parts);
              if (lines.length === 1) void post('two');
              if (lines.length >= 2) { req.destroy(); resolve(); }
            });
          });
        req.on('error', (e) => (lines.length >= 2 ? resolve() : reject(e)));
        req.end();
      });
      const evs = lines.map((l) => JSON.parse(l));
      expect(evs.map((e) => e.type)).toEqual(['ADDED', 'ADDED']);
      expect(evs[0].object.kind).toBe('Table');
      expect(evs[0].object.columnDefinitions.map((c: any) => c.name))
        .toEqual(['Name', 'Status', 'Age']);
      expect(evs[1].object.columnDefinitions).toBeNull();
      expect(evs[1].object.rows[0].cells[0]).toBe('two');
    } finally {
      await srv.close();
      await store.close();
    }
  });
});
