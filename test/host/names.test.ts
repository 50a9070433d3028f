import { describe, expect, it } from 'vitest';
import { boundedName, linkName, netnsName } from '../../src/host/names.js';

describe('kernel names', () => {
  it('keeps short clean names readable with the kdp prefix', () => {
    expect(linkName('br0')).toBe('kdp-br0');
    expect(netnsName('c1', 'node-1')).toBe('kdp-c1-node-1');
  });

  it('bounds link names to 15 characters with a hash when too long', () => {
    const n = linkName('a-very-long-node-name-indeed');
    expect(n.length).toBeLessThanOrEqual(15);
    expect(n).toMatch(/^kdp-[a-z0-9-]*-[0-9a-f]{6}$/);
  });

  it('gives different kernel names to names that sanitise alike', () => {
    expect(linkName('Node_1')).not.toBe(linkName('node-1'));
    expect(linkName('node;rm -rf /')).toMatch(/^[a-z0-9-]+$/);
  });

  it('is stable across versions: the same object gets the same kernel name (kdp down finds it)', () => {
    expect(boundedName(['x'.repeat(40)], 15)).toBe('kdp-xxxx-bd913f');
    expect(linkName('a-very-long-node-name-indeed')).toBe('kdp-a-ve-e0695a');
  });
});
