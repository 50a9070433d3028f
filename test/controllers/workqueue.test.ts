import { describe, expect, it, vi } from 'vitest';
import { buildWorkQueue, runWorkers } from '../../src/client/workqueue.js';
import { buildExpectations } from '../../src/controllers/expectations.js';

describe('work queue', () => {
  it('holds an item once however often it is added', async () => {
    const q = buildWorkQueue<string>();
    q.add('a'); q.add('b'); q.add('a');
    expect(q.len()).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
  });

  it('re-queues an item added while it was being processed, after done', async () => {
    const q = buildWorkQueue<string>();
    q.add('a');
    const item = await q.get();
    q.add('a');
    expect(q.len()).toBe(0); // not handed to a second worker while in flight
    q.done(item!);
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe('a');
  });

  it('retries failing keys with growing back-off and forgets them on success', async () => {
    const q = buildWorkQueue<string>({ baseDelayMs: 1 });
    let calls = 0;
    q.add('k');
    const done = runWorkers(q, 1, async () => {
      calls++;
      if (calls < 3) throw new Error('boom');
      q.shutDown();
    });
    await done;
    expect(calls).toBe(3);
    expect(q.numRequeues('k')).toBe(0);
  });

  it('rate limiting doubles the delay per failure of the same item, up to the maximum', async () => {
    vi.useFakeTimers();
    try {
      const q = buildWorkQueue<string>({ baseDelayMs: 1000, maxDelayMs: 4000 });
      // Each retry comes back after its delay and not a millisecond before: 1, 2, 4, 4 s (capped).
      for (const delay of [1000, 2000, 4000, 4000]) {
        q.addRateLimited('x');
        vi.advanceTimersByTime(delay - 1);
        expect(q.len()).toBe(0);
        vi.advanceTimersByTime(1);
        expect(q.len()).toBe(1);
        q.done((await q.get())!);
      }
      expect(q.numRequeues('x')).toBe(4);
      q.forget('x');
      expect(q.numRequeues('x')).toBe(0);
      q.addRateLimited('x');
      vi.advanceTimersByTime(1000);
      expect(q.len()).toBe(1); // forgotten: back to the base delay
      q.shutDown();
    } finally {
      vi.useRealTimers();
    }
  });

  it('get resolves undefined after shutdown', async () => {
    const q = buildWorkQueue<string>();
    const p = q.get();
    q.shutDown();
    expect(await p).toBeUndefined();
  });
});

describe('controller expectations', () => {
  it('are satisfied once every expected create and delete was observed', () => {
    let now = 0;
    const e = buildExpectations(1000, () => now);
    expect(e.satisfied('rs')).toBe(true);
    e.expect('rs', 2, 1);
    e.creationObserved('rs');
    expect(e.satisfied('rs')).toBe(false);
    e.creationObserved('rs');
    e.deletionObserved('rs');
    expect(e.satisfied('rs')).toBe(true);
    e.expect('rs', 1, 0);
    now = 2000;
    expect(e.satisfied('rs')).toBe(true); // expired
  });
});
