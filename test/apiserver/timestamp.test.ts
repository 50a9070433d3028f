import { describe, expect, it } from 'vitest';
import { timestamp } from '../../src/apiserver/rest/prepare.js';

describe('metav1.Time stamps', () => {
  it('drop the milliseconds and change exactly at each second', () => {
    const t = Date.UTC(2026, 11, 2, 22, 30, 59, 0);
    expect(timestamp(new Date(t))).toBe('2026-12-02T22:30:59Z');
    expect(timestamp(new Date(t + 999))).toBe('2026-12-02T22:30:59Z');
    expect(timestamp(new Date(t + 1000))).toBe('2026-12-02T22:31:00Z');
    expect(timestamp(new Date(t - 1))).toBe('2026-12-02T22:30:58Z');
  });

  it('format any date, before 1970 and past year 9999 too, and reject an invalid one', () => {
    expect(timestamp(new Date(Date.UTC(1969, 11, 31, 23, 59, 59, 500))))
      .toBe('1969-12-31T23:59:59Z');
    const far = new Date(Date.UTC(10000, 0, 1, 0, 0, 0, 250));
    expect(timestamp(far)).toBe('+010000-01-01T00:00:00Z');
    expect(timestamp(new Date(Date.UTC(2026, 0, 1)))).toBe('2026-01-01T00:00:00Z');
    expect(() => timestamp(new Date(NaN))).toThrow(RangeError);
  });
});
