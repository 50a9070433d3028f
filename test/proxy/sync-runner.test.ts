import { describe, expect, it } from 'vitest';
import { BoundedFrequencyRunner } from '../../src/proxy/sync-runner.js';
import type { Clock } from '../../src/proxy/sync-runner.js';

/** A hand-driven clock: `advance(ms)` fires due timers in time order. */
function manualClock() {
  let now = 0;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const clock: Clock = {
    now: () => now,
    setTimeout: (fn, ms) => { timers.set(++seq, { at: now + ms, fn }); return seq; },
    clearTimeout: (h) => { timers.delete(h as number); },
  };
  const advance = (ms: number) => {
    const end = now + ms;
    for (;;) {
      const next = [...timers.entries()].sort((a, b) => a[1].at - b[1].at)[0];
      if (!next || next[1].at > end) break;
      timers.delete(next[0]);
      now = next[1].at;
      next[1].fn();
    }
    now = end;
  };
  return { clock, advance };
}

describe('bounded-frequency sync runner', () => {
  it('runs a burst at once, then no more often than minInterval', () => {
    const { clock, advance } = manualClock();
    const runs: number[] = [];
    const r = new BoundedFrequencyRunner(() => { runs.push(clock.now()); },
      { minIntervalMs: 1000, maxIntervalMs: 60_000, burst: 2, clock });
    r.run(); advance(0);
    r.run(); advance(0);
    r.run(); advance(0);
    expect(runs).toEqual([0, 0]);
    advance(999);
    expect(runs).toEqual([0, 0]);
    advance(1);
    expect(runs).toEqual([0, 0, 1000]);
  });

  it('coalesces requests made while waiting into one run', () => {
    const { clock, advance } = manualClock();
    let runs = 0;
    const r = new BoundedFrequencyRunner(() => { runs++; },
      { minIntervalMs: 1000, maxIntervalMs: 60_000, burst: 1, clock });
    r.run(); advance(0);
    for (let i = 0; i < 5; i++) { r.run(); advance(100); }
    advance(1000);
    expect(runs).toBe(2);
  });

  it('runs periodically every maxInterval once started, and retries after a failure', () => {
    const { clock, advance } = manualClock();
    const runs: number[] = [];
    const r = new BoundedFrequencyRunner(() => { runs.push(clock.now()); },
      { minIntervalMs: 100, maxIntervalMs: 10_000, clock });
    r.start();
    advance(20_000);
    expect(runs).toEqual([10_000, 20_000]);
    r.retryAfter(500);
    advance(500);
    expect(runs).toEqual([10_000, 20_000, 20_500]);
    r.stop();
    advance(50_000);
    expect(runs).toHaveLength(3);
  });

  it('after stop nothing fires: not a requested run, a retry or a periodic run', () => {
    const { clock, advance } = manualClock();
    let runs = 0;
    const r = new BoundedFrequencyRunner(() => { runs++; },
      { minIntervalMs: 100, maxIntervalMs: 1000, clock });
    r.start();
    r.run(); advance(0);
    expect(runs).toBe(1);
    r.retryAfter(50);
    r.stop();
    r.run();
    r.retryAfter(10);
    advance(10_000);
    expect(runs).toBe(1);
  });
});

