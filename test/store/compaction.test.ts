import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoreBackend } from '../../src/store/types.js';
import { backends, collect, type Opened } from './backends.js';

describe.each(backends)('$name store compaction and history window', (backend) => {
  let opened: Opened;
  let s: StoreBackend;
  beforeEach(async () => {
    opened = await backend.open({ historyWindow: 20 });
    s = opened.store;
    for (let i = 0; i < 10; i++) await s.create(`/k/${i}`, `v${i}`); // revs 2..11
  });
  afterEach(() => opened.cleanup());

  it('list and watch before the compacted revision are gone; at or after it work', async () => {
    await s.compact(6);
    expect(s.stats().compactedRevision).toBe(6);
    await expect(s.list('/k/', { revision: 5 })).rejects.toMatchObject({ code: 'KDP_GONE' });
    expect(() => s.watch('/k/', 5, { onEvents() {} })).toThrow(
      expect.objectContaining({ code: 'KDP_GONE' }),
    );
    expect((await s.list('/k/', { revision: 6 })).items).toHaveLength(5);
    const w = collect((h) => s.watch('/k/', 6, h));
    await w.waitFor(5);
    expect(w.events.map((e) => e.kv.modRevision)).toEqual([7, 8, 9, 10, 11]);
    w.watcher.stop();
  });

  it('current reads are unaffected by compaction', async () => {
    await s.compact(s.currentRevision());
    expect((await s.list('/k/')).items).toHaveLength(10);
    expect((await s.get('/k/3'))?.value).toBe('v3');
  });

  it('compacting to a future revision is refused; compacting backwards is a no-op', async () => {
    await expect(s.compact(100)).rejects.toMatchObject({ code: 'KDP_BAD_REQUEST' });
    await s.compact(8);
    await s.compact(4);
    expect(s.stats().compactedRevision).toBe(8);
  });

  // The embedded store's history window; etcd keeps history until compacted.
  it.skipIf(backend.name.startsWith('etcd'))('the bounded history window evicts old revisions as if compacted', async () => {
    for (let i = 0; i < 30; i++) await s.update('/k/0', `u${i}`); // revs 12..41
    expect(s.stats().compactedRevision).toBe(21);
    await expect(s.list('/k/', { revision: 20 })).rejects.toMatchObject({ code: 'KDP_GONE' });
    const past = await s.list('/k/', { revision: 21 });
    expect(past.items.find((i) => i.key === '/k/0')?.value).toBe('u9');
  });
});
