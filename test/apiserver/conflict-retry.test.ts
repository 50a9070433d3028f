import { rm } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildEmbeddedStore } from '../../src/store/index.js';
import { tempDir } from '../store/backends.js';
import { buildTestServer } from './helpers/server.js';
import type { TestServer } from './helpers/server.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const MERGE = { 'content-type': 'application/merge-patch+json' };

describe('writes that meet a write still being committed', () => {
  let dir: string;
  let s: TestServer;
  let waits: string[];
  beforeEach(async () => {
    dir = await tempDir();
    // A durable store: a write stays pending for its fdatasync, so concurrent writers conflict.
    const store = await buildEmbeddedStore({ dataDir: dir });
    waits = [];
    const settled = store.settled!.bind(store);
    vi.spyOn(store, 'settled').mockImplementation((key: string) => {
      waits.push(key);
      return settled(key);
    });
    s = await buildTestServer({ store });
  });
  afterEach(async () => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    await s.done();
    await rm(dir, { recursive: true, force: true });
  });

  it('retry once that commit lands, with no timer: concurrent patches all succeed',
    async () => {
      expect((await s.req('POST', CMS, { metadata: { name: 'hot' }, data: {} })).status)
        .toBe(201);
      vi.useFakeTimers({ toFake: ['setTimeout'] }); // a timer-based back-off would never fire
      const patches = await Promise.all(Array.from({ length: 8 }, (_, i) =>
        s.req('PATCH', `${CMS}/hot`, { data: { [`k${i}`]: String(i) } }, MERGE)));
      expect(patches.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(waits.length).toBeGreaterThan(0);
      expect(waits.every((k) => k.endsWith('/configmaps/default/hot'))).toBe(true);
      const got = await s.req('GET', `${CMS}/hot`);
      expect(Object.keys(got.body.data).sort()).toEqual(
        Array.from({ length: 8 }, (_, i) => `k${i}`).sort());
      // A patch racing the delete lands before it (200) or finds the object gone (404): no 409.
      const [p1, del, p2] = await Promise.all([
        s.req('PATCH', `${CMS}/hot`, { data: { last: 'x' } }, MERGE),
        s.req('DELETE', `${CMS}/hot`),
        s.req('PATCH', `${CMS}/hot`, { data: { last: 'y' } }, MERGE),
      ]);
      expect(del.status).toBe(200);
      expect([200, 404]).toContain(p1.status);
      expect([200, 404]).toContain(p2.status);
      expect((await s.req('GET', `${CMS}/hot`)).status).toBe(404);
    });
});
