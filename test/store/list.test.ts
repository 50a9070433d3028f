import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoreBackend } from '../../src/store/types.js';
import { backends, type Opened } from './backends.js';

const keysOf = (r: { items: readonly { key: string }[] }) => r.items.map((i) => i.key);

describe.each(backends)('$name store list', (backend) => {
  let opened: Opened;
  let s: StoreBackend;
  beforeEach(async () => {
    opened = await backend.open();
    s = opened.store;
    for (const k of [
      '/registry/pods/kube-system/dns', '/registry/pods/default/b', '/registry/pods/default/a',
      '/registry/nodes/n1', '/registry/pods/default/c', '/registry/podsx/default/z',
    ]) {
      await s.create(k, `v:${k}`);
    }
  });
  afterEach(() => opened.cleanup());

  it('lists a prefix in ascending key order across namespaces', async () => {
    const r = await s.list('/registry/pods/');
    expect(keysOf(r)).toEqual([
      '/registry/pods/default/a', '/registry/pods/default/b', '/registry/pods/default/c',
      '/registry/pods/kube-system/dns',
    ]);
    expect(r).toMatchObject({ revision: 7, more: false, remaining: 0 });
    expect(keysOf(await s.list('/registry/pods/default/'))).toHaveLength(3);
    expect(keysOf(await s.list('/registry/nodes/'))).toEqual(['/registry/nodes/n1']);
    expect(keysOf(await s.list(''))).toHaveLength(6);
  });

  it('pages with limit and startAfter, reporting remaining items', async () => {
    const p1 = await s.list('/registry/pods/', { limit: 2 });
    expect(keysOf(p1)).toEqual(['/registry/pods/default/a', '/registry/pods/default/b']);
    expect(p1).toMatchObject({ more: true, remaining: 2 });
    const p2 = await s.list('/registry/pods/', { limit: 2, startAfter: p1.items[1]!.key });
    expect(keysOf(p2)).toEqual(['/registry/pods/default/c', '/registry/pods/kube-system/dns']);
    expect(p2).toMatchObject({ more: false, remaining: 0 });
    const p3 = await s.list('/registry/pods/', {
      limit: 2, startAfter: '/registry/pods/default/a',
    });
    expect(p3).toMatchObject({ more: true, remaining: 1 });
  });

  it('lists at a past revision: later creates, updates and deletes are undone', async () => {
    const rev = s.currentRevision();
    await s.update('/registry/pods/default/a', 'changed');
    await s.delete('/registry/pods/default/b');
    await s.create('/registry/pods/default/aa', 'new');
    const now = await s.list('/registry/pods/default/');
    expect(keysOf(now)).toEqual([
      '/registry/pods/default/a', '/registry/pods/default/aa', '/registry/pods/default/c',
    ]);
    const past = await s.list('/registry/pods/default/', { revision: rev });
    expect(past.revision).toBe(rev);
    expect(past.items.map((i) => [i.key, i.value, i.modRevision])).toEqual([
      ['/registry/pods/default/a', 'v:/registry/pods/default/a', 4],
      ['/registry/pods/default/b', 'v:/registry/pods/default/b', 3],
      ['/registry/pods/default/c', 'v:/registry/pods/default/c', 6],
    ]);
    const paged = await s.list('/registry/pods/default/', {
      revision: rev, limit: 1, startAfter: '/registry/pods/default/a',
    });
    expect(keysOf(paged)).toEqual(['/registry/pods/default/b']);
    expect(paged).toMatchObject({ more: true, remaining: 1 });
    expect(keysOf(await s.list('/registry/pods/', { revision: 1 }))).toEqual([]);
  });

  it('a list at a future revision is refused as too large', async () => {
    await expect(s.list('/registry/', { revision: 99 })).rejects.toMatchObject({
      code: 'KDP_TIMEOUT',
    });
  });
});
