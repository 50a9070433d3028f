import { describe, expect, it } from 'vitest';
import { cpuQuantity, memoryQuantity, parseQuantity } from '../../src/metrics/quantity.js';

describe('metrics quantities in Quantity canonical form', () => {
  it('CPU takes the largest exact decimal suffix of nanocores', () => {
    expect(cpuQuantity(0)).toBe('0');
    expect(cpuQuantity(250e6)).toBe('250m');
    expect(cpuQuantity(2e9)).toBe('2');
    expect(cpuQuantity(1500e3)).toBe('1500u');
    expect(cpuQuantity(12345)).toBe('12345n');
  });
  it('memory takes the largest exact binary suffix of bytes, else plain bytes', () => {
    expect(memoryQuantity(64 * 2 ** 20)).toBe('64Mi');
    expect(memoryQuantity(4100 * 1024)).toBe('4100Ki');
    expect(memoryQuantity(1000)).toBe('1000');
    expect(memoryQuantity(2 ** 30)).toBe('1Gi');
  });
  it('parses requests', () => {
    expect(parseQuantity('250m')).toBeCloseTo(0.25);
    expect(parseQuantity('64Mi')).toBe(64 * 2 ** 20);
    expect(parseQuantity('1G')).toBe(1e9);
    expect(parseQuantity('x')).toBeUndefined();
  });
});
