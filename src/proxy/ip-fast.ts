// Fast paths for the IP canonicalisation the change trackers do on every Service and endpoint
// (100k+ per large sync). Almost every address is already a canonical dotted quad; only the
// others go through the full parser of src/api/net.ts.

import { canonicalIP, parseIP } from '../api/net.js';
import type { IPFamily } from '../api/net.js';

/** `s` is a dotted quad in canonical form: 4 decimal octets ≤ 255, no leading zeros. */
export function isCanonicalIPv4(s: string): boolean {
  const n = s.length;
  if (n < 7 || n > 15) return false;
  let dots = 0;
  let digits = 0;
  let value = 0;
  let first = 0;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? s.charCodeAt(i) : 46; // a virtual '.' closes the last octet
    if (c === 46) {
      if (digits === 0 || value > 255 || (digits > 1 && first === 48)) return false;
      if (i < n && ++dots > 3) return false;
      digits = 0;
      value = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits === 0) first = c;
      if (++digits > 3) return false;
      value = value * 10 + (c - 48);
    } else {
      return false;
    }
  }
  return dots === 3;
}

/** canonicalIP(s), skipping the parser for canonical IPv4 (which it returns unchanged). */
export function canonicalIPFast(s: string): string | undefined {
  return isCanonicalIPv4(s) ? s : canonicalIP(s);
}

/** The family of `s` (undefined when not an IP), skipping the parser for canonical IPv4. */
export function familyOfIP(s: string): IPFamily | undefined {
  return isCanonicalIPv4(s) ? 'IPv4' : parseIP(s)?.family;
}
