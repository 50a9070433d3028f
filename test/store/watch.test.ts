import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoreBackend } from '../../src/store/types.js';
import { backends, collect, settle, type Opened } from './backends.js';

describe.each(backends)('$name store watch', (backend) => {
  let opened: Opened;
  let s: StoreBackend;
  beforeEach(async () => {
    opened = await backend.open();
    s = opened.store;
  });
  afterEach(() => opened.cleanup());

  it('delivers history after the given revision, then live events, in order', async () => {
    await s.create('/registry/pods/default/a', '1'); // rev 2
    await s.create('/registry/pods/default/b', '1'); // rev 3
    await s.update('/registry/pods/default/a', '2'); // rev 4
    const w = collect((h) => s.watch('/registry/pods/', 2, h));
    await s.delete('/registry/pods/default/b'); // rev 5
    await s.create('/registry/pods/default/c', '1'); // rev 6
    await w.waitFor(4);
    expect(w.events.map((e) => [e.type, e.kv.key, e.kv.modRevision, e.created])).toEqual([
      ['put', '/registry/pods/default/b', 3, true],
      ['put', '/registry/pods/default/a', 4, false],
      ['delete', '/registry/pods/default/b', 5, false],
      ['put', '/registry/pods/default/c', 6, true],
    ]);
    expect(w.events[1]!.prevKv?.value).toBe('1');
    expect(w.events[2]!.kv.value).toBe('1');
    expect(w.events[2]!.prevKv?.modRevision).toBe(3);
    w.watcher.stop();
  });

  it('filters by prefix: one namespace only, no sibling prefixes', async () => {
    const w = collect((h) => s.watch('/registry/pods/default/', s.currentRevision(), h));
    await s.create('/registry/pods/kube-system/x', '1');
    await s.create('/registry/pods/default/a', '1');
    await s.create('/registry/pods/default-2/a', '1');
    await s.create('/registry/nodes/n1', '1');
    await s.create('/registry/pods/default/b', '1');
    await w.waitFor(2);
    await settle();
    expect(w.events.map((e) => e.kv.key)).toEqual([
      '/registry/pods/default/a', '/registry/pods/default/b',
    ]);
  });

  it('concurrent writes reach every watcher once each, in increasing revisions', async () => {
    const ws = [0, 1, 2].map(() => collect((h) => s.watch('/k/', 1, h)));
    await Promise.all(Array.from({ length: 300 }, (_, i) => s.create(`/k/${i}`, 'v')));
    for (const w of ws) {
      await w.waitFor(300);
      const revs = w.events.map((e) => e.kv.modRevision);
      expect(revs).toEqual(Array.from({ length: 300 }, (_, i) => i + 2));
    }
  });

  it('a watch opened while writes are in flight misses none and repeats none', async () => {
    const writes = Array.from({ length: 200 }, (_, i) => s.create(`/k/${i}`, 'v'));
    await settle();
    const from = s.currentRevision();
    const w = collect((h) => s.watch('/k/', from, h));
    const more = Array.from({ length: 50 }, (_, i) => s.create(`/k/more-${i}`, 'v'));
    await Promise.all([...writes, ...more]);
    await w.waitFor(251 - from);
    await settle();
    const expected = Array.from({ length: 251 - from }, (_, i) => from + 1 + i);
    expect(w.events.map((e) => e.kv.modRevision)).toEqual(expected);
  });

  it('a stopped watcher receives nothing more', async () => {
    const w = collect((h) => s.watch('/k/', 1, h));
    await s.create('/k/a', '1');
    await w.waitFor(1);
    w.watcher.stop();
    w.watcher.stop();
    await s.create('/k/b', '1');
    await settle();
    expect(w.events).toHaveLength(1);
    expect(w.closed()).toBeUndefined();
  });

  it('a watch from a future revision only gets events after it', async () => {
    const w = collect((h) => s.watch('/k/', 3, h));
    await s.create('/k/a', '1'); // 2
    await s.create('/k/b', '1'); // 3
    await s.create('/k/c', '1'); // 4
    await w.waitFor(1);
    await settle();
    expect(w.events.map((e) => e.kv.modRevision)).toEqual([4]);
  });

  it('closing the store closes its watchers with KDP_STORE_CLOSED', async () => {
    const w = collect((h) => s.watch('/k/', 1, h));
    await s.close();
    expect(w.closed()?.err).toMatchObject({ code: 'KDP_STORE_CLOSED' });
  });

  // The embedded store's own limit (etcd applies its own to slow watchers).
  it.skipIf(backend.name.startsWith('etcd'))('a watcher that falls behind its queue limit is closed with KDP_GONE', async () => {
    await opened.cleanup();
    opened = await backend.open({ watchQueueLimit: 10 });
    s = opened.store;
    const w = collect((h) => s.watch('/k/', 1, h));
    await Promise.all(Array.from({ length: 50 }, (_, i) => s.create(`/k/${i}`, 'v')));
    await settle();
    expect(w.closed()?.err).toMatchObject({ code: 'KDP_GONE' });
    expect(w.events).toHaveLength(0);
  });

  it('a handler that throws ends only its own watch', async () => {
    const throwing = () => {
      throw new Error('boom');
    };
    const bad = collect((h) => s.watch('/k/', 1, { ...h, onEvents: throwing }));
    const good = collect((h) => s.watch('/k/', 1, h));
    await s.create('/k/a', '1');
    await s.create('/k/b', '1');
    await good.waitFor(2);
    expect(bad.closed()?.err?.message).toBe('boom');
  });
});
