// The IP module's fast paths agree with its general parser on every input: canonical dotted
// quads are read without it, everything else (leading zeros, IPv6, IPv4-mapped, junk) is
// handed to it, so a caller can never tell which path ran.

import { describe, expect, it } from 'vitest';
import {
  canonicalIP, canonicalIPFast, dottedQuadValue, familyOfIP, formatIP, isCanonicalIPv4, parseIP, writtenFamily,
} from '../../src/api/net.js';

const EDGES = ['0.0.0.0', '255.255.255.255', '10.0.0.1', '1.2.3.4', '010.0.0.1', '10.0.0.01', '256.1.1.1',
  '1.2.3', '1.2.3.4.5', '1..2.3', '.1.2.3', '1.2.3.', '1.2.3.4 ', '1.2.3.-4', '1.2.3.1000', '::ffff:1.2.3.4',
  '::1', 'fe80::1', 'FE80:0::1', '', '10.0.0.0/8', 'a.b.c.d', '00.0.0.0', '0.0.0.00', '192.168.001.1'];

/** Seeded dotted quads of 1-4 digit groups, a third of them with one character changed. */
function fuzz(n: number): string[] {
  let x = 12345;
  const rnd = () => { x = (x * 1103515245 + 12345) & 0x7fffffff; return x / 0x7fffffff; };
  const pick = (chars: string) => chars[Math.floor(rnd() * chars.length)]!;
  return Array.from({ length: n }, () => {
    const groups = Array.from({ length: rnd() < 0.9 ? 4 : 3 + Math.floor(rnd() * 3) }, () =>
      Array.from({ length: 1 + Math.floor(rnd() * (rnd() < 0.9 ? 3 : 4)) }, () => pick('0123456789')).join(''));
    const s = groups.join('.');
    if (rnd() > 0.33) return s;
    const at = Math.floor(rnd() * s.length);
    return s.slice(0, at) + pick('.:a/ 0') + s.slice(at + 1);
  });
}

describe('IP fast paths', () => {
  it.each(EDGES)('%j: the fast path and the parser agree', (s) => {
    const p = parseIP(s);
    const canonicalV4 = p?.family === 'IPv4' && formatIP(p) === s;
    expect(isCanonicalIPv4(s)).toBe(canonicalV4);
    expect(dottedQuadValue(s)).toBe(canonicalV4 ? Number(p!.value) : -1);
    expect(canonicalIPFast(s)).toBe(canonicalIP(s));
    expect(familyOfIP(s)).toBe(p?.family);
  });

  it('agree on 20,000 seeded near-addresses', () => {
    const wrong = fuzz(20_000).filter((s) => {
      const p = parseIP(s);
      const canonicalV4 = p?.family === 'IPv4' && formatIP(p) === s;
      return isCanonicalIPv4(s) !== canonicalV4 || canonicalIPFast(s) !== canonicalIP(s)
        || (canonicalV4 && dottedQuadValue(s) !== Number(p!.value));
    });
    expect(wrong).toEqual([]);
    expect(fuzz(20_000).filter(isCanonicalIPv4).length).toBeGreaterThan(2_000);
  });

  it('writtenFamily reads the family of valid addresses and CIDRs from their text', () => {
    expect(['10.0.0.1', '10.0.0.0/8', '::1', 'fd00::/64'].map(writtenFamily)).toEqual(['IPv4', 'IPv4', 'IPv6', 'IPv6']);
  });
});
