import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import type { StoreBackend } from '../../src/store/types.js';
import { backends, type Opened } from './backends.js';

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    return isKdpError(e) ? e.code : String(e);
  }
}

describe.each(backends)('$name store CRUD', (backend) => {
  let opened: Opened;
  let s: StoreBackend;
  beforeEach(async () => {
    opened = await backend.open();
    s = opened.store;
  });
  afterEach(() => opened.cleanup());

  it('a fresh store is at revision 1 and the first write gets revision 2', async () => {
    expect(s.currentRevision()).toBe(1);
    const kv = await s.create('/registry/pods/default/a', '{"a":1}');
    expect(kv).toEqual({
      key: '/registry/pods/default/a', value: '{"a":1}',
      createRevision: 2, modRevision: 2, version: 1,
    });
    expect(s.currentRevision()).toBe(2);
    expect(await s.get('/registry/pods/default/a')).toEqual(kv);
  });

  it('update keeps createRevision, bumps modRevision and version', async () => {
    await s.create('/k/other', 'o');
    const a = await s.create('/k/a', 'v1');
    const b = await s.update('/k/a', 'v2', a.modRevision);
    const c = await s.update('/k/a', 'v3');
    expect(b).toMatchObject({ value: 'v2', createRevision: 3, modRevision: 4, version: 2 });
    expect(c).toMatchObject({ value: 'v3', createRevision: 3, modRevision: 5, version: 3 });
    expect(s.stats()).toMatchObject({ revision: 5, compactedRevision: 0, keys: 2 });
  });

  it('a key read again after each update gives its newest value every time', async () => {
    await s.create('/k/hot', 'v0');
    for (let i = 1; i <= 3; i++) {
      expect((await s.get('/k/hot'))!.value).toBe(`v${i - 1}`);
      expect((await s.get('/k/hot'))!.value).toBe(`v${i - 1}`);
      await s.update('/k/hot', `v${i}`);
    }
    await s.delete('/k/hot');
    expect(await s.get('/k/hot')).toBeUndefined();
    await s.create('/k/hot', 'again');
    expect((await s.get('/k/hot'))!.value).toBe('again');
  });

  it('settled resolves at once for a key with no pending write, else once reads see it',
    async () => {
      await s.settled!('/k/none');
      const created = s.create('/k/a', 'v1');
      // The embedded store's group commit has not synced it yet; etcd may already have it.
      if (!backend.name.startsWith('etcd')) expect(await s.get('/k/a')).toBeUndefined();
      await s.settled!('/k/a');
      expect((await s.get('/k/a'))?.value).toBe('v1');
      await created;
      const a = s.update('/k/a', 'v2');
      const b = s.update('/k/a', 'v3');
      await s.settled!('/k/a'); // the newest pending write: every earlier one is committed too
      expect((await s.get('/k/a'))?.value).toBe('v3');
      await Promise.all([a, b]);
    });

  it('update with a stale modRevision is a conflict and changes nothing', async () => {
    const a = await s.create('/k/a', 'v1');
    await s.update('/k/a', 'v2', a.modRevision);
    expect(await codeOf(s.update('/k/a', 'v3', a.modRevision))).toBe('KDP_CONFLICT');
    expect(await codeOf(s.delete('/k/a', a.modRevision))).toBe('KDP_CONFLICT');
    expect((await s.get('/k/a'))?.value).toBe('v2');
    expect(s.currentRevision()).toBe(3);
  });

  it('create of an existing key is already-exists; missing keys are not-found', async () => {
    await s.create('/k/a', 'v1');
    expect(await codeOf(s.create('/k/a', 'again'))).toBe('KDP_ALREADY_EXISTS');
    expect(await codeOf(s.update('/k/missing', 'x'))).toBe('KDP_NOT_FOUND');
    expect(await codeOf(s.delete('/k/missing'))).toBe('KDP_NOT_FOUND');
    expect(await s.get('/k/missing')).toBeUndefined();
  });

  it('delete returns the last value at the delete revision; the key can be recreated', async () => {
    const a = await s.create('/k/a', 'v1');
    const d = await s.delete('/k/a', a.modRevision);
    expect(d).toEqual({ key: '/k/a', value: 'v1', createRevision: 2, modRevision: 3, version: 1 });
    expect(await s.get('/k/a')).toBeUndefined();
    const again = await s.create('/k/a', 'v2');
    expect(again).toMatchObject({ createRevision: 4, modRevision: 4, version: 1 });
  });

  it('concurrent conflicting writes: exactly one create wins and updates serialise', async () => {
    const results = await Promise.allSettled([s.create('/k/x', '1'), s.create('/k/x', '2')]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const cur = (await s.get('/k/x'))!;
    const ups = await Promise.allSettled([
      s.update('/k/x', 'a', cur.modRevision), s.update('/k/x', 'b', cur.modRevision),
    ]);
    expect(ups.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('an empty key is a bad request and an oversized value is too large', async () => {
    expect(await codeOf(s.create('', 'x'))).toBe('KDP_BAD_REQUEST');
    expect(await codeOf(s.create('/k/big', 'x'.repeat(17 * 1024 * 1024)))).toBe('KDP_TOO_LARGE');
    expect(s.currentRevision()).toBe(1);
  });

  it('operations after close fail with KDP_STORE_CLOSED', async () => {
    await s.close();
    expect(await codeOf(s.get('/k/a'))).toBe('KDP_STORE_CLOSED');
    expect(await codeOf(s.create('/k/a', 'x'))).toBe('KDP_STORE_CLOSED');
  });
});
