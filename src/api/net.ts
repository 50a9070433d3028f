// IP and CIDR helpers shared by the API, IP allocators, kube-proxy, CNI and the tracer.
//
// Parsing follows Kubernetes' `netutils.ParseIPSloppy` / `ParseCIDRSloppy` (Go's pre-1.17
// `net.ParseIP`): IPv4 octets may carry leading zeros (read as decimal), zones (`%eth0`) are
// rejected, and an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) is an IPv4 address, as Go's
// `To4()` treats it. Formatting is Go's `IP.String()`: dotted quad, or RFC 5952 IPv6 (lower
// case, longest run of two or more zero groups compressed, first run on a tie).
// Addresses are held as bigint so IPv4 and IPv6 share one arithmetic.

export type IPFamily = 'IPv4' | 'IPv6';

/** A parsed address: its family and its value as an unsigned integer (32 or 128 bits). */
export interface ParsedIP {
  readonly family: IPFamily;
  readonly value: bigint;
}

/** A parsed CIDR: the network address (host bits cleared) and prefix length. */
export interface ParsedCIDR {
  readonly family: IPFamily;
  readonly base: bigint;
  readonly prefix: number;
  /** The address as written before the slash (may have host bits), as Go's ParseCIDR. */
  readonly ip: ParsedIP;
}

const MAPPED_PREFIX = 0xffffn << 32n;

export function familyBits(f: IPFamily): number {
  return f === 'IPv4' ? 32 : 128;
}

function parseIPv4Value(s: string): bigint | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  let v = 0n;
  for (const p of parts) {
    if (!/^[0-9]{1,10}$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

function parseGroups(s: string): number[] | null {
  if (s === '') return [];
  const out: number[] = [];
  for (const g of s.split(':')) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    out.push(parseInt(g, 16));
  }
  return out;
}

function parseIPv6Value(s: string): bigint | null {
  let text = s;
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (lastColon >= 0 && text.indexOf('.', lastColon) > lastColon) {
    const v4 = parseIPv4Value(text.slice(lastColon + 1));
    if (v4 === null) return null;
    tail = [Number(v4 >> 16n), Number(v4 & 0xffffn)];
    text = text.slice(0, lastColon + 1);
    if (!text.endsWith('::')) text = text.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = parseGroups(halves[0]!);
  const rest = halves.length === 2 ? parseGroups(halves[1]!) : [];
  if (head === null || rest === null) return null;
  const tailAll = [...rest, ...tail];
  const missing = 8 - head.length - tailAll.length;
  if (halves.length === 1 && missing !== 0) return null;
  if (halves.length === 2 && missing < 1) return null;
  const groups = [...head, ...new Array<number>(Math.max(missing, 0)).fill(0), ...tailAll];
  let v = 0n;
  for (const g of groups) v = (v << 16n) | BigInt(g);
  return v;
}

/** Parses an address as ParseIPSloppy does; `null` when it is not an IP. */
export function parseIP(s: string): ParsedIP | null {
  if (typeof s !== 'string' || s.length === 0 || s.length > 45) return null;
  if (!s.includes(':')) {
    const v = parseIPv4Value(s);
    return v === null ? null : { family: 'IPv4', value: v };
  }
  const v = parseIPv6Value(s);
  if (v === null) return null;
  if (v >> 32n === 0xffffn) return { family: 'IPv4', value: v & 0xffffffffn };
  return { family: 'IPv6', value: v };
}

export function isIP(s: string): boolean {
  return parseIP(s) !== null;
}

export function isIPv4(s: string): boolean {
  return parseIP(s)?.family === 'IPv4';
}

export function isIPv6(s: string): boolean {
  return parseIP(s)?.family === 'IPv6';
}

/** The family of an address or CIDR string, or undefined when it is neither. */
export function ipFamilyOf(s: string): IPFamily | undefined {
  return s.includes('/') ? parseCIDR(s)?.family : parseIP(s)?.family;
}

function formatIPv6(v: bigint): string {
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((v >> BigInt(i * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) { bestStart = i; bestLen = j - i; }
    i = j;
  }
  const hex = (a: number[]): string => a.map((g) => g.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`;
}

/** Formats a value of a family as Go's IP.String(). */
export function formatIP(ip: ParsedIP): string {
  if (ip.family === 'IPv4') {
    const v = Number(ip.value);
    return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
  }
  return formatIPv6(ip.value);
}

/** Canonical form of an address (`010.1.1.1` → `10.1.1.1`, `FE80:0::1` → `fe80::1`). */
export function canonicalIP(s: string): string | undefined {
  const ip = parseIP(s);
  return ip ? formatIP(ip) : undefined;
}

// Fast paths for the hot loops: kube-proxy's change trackers canonicalise every Service and
// endpoint address (100k+ per large sync) and the tracer matches packet addresses against
// CIDRs. Almost every address there is already a canonical dotted quad, which these read as a
// plain number, without the general parser and its bigint; anything else takes parseIP.

/** The value of a canonical dotted quad (`10.0.0.1`: four decimal octets ≤ 255, no leading
 *  zeros), or -1 for any other text (other spellings, IPv6: ask parseIP). */
export function dottedQuadValue(s: string): number {
  const n = s.length;
  if (n < 7 || n > 15) return -1;
  let v = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < n; i++) {
    const ch = s.charCodeAt(i);
    if (ch === 46) {
      if (digits === 0 || dots === 3) return -1;
      v = v * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else if (ch >= 48 && ch <= 57) {
      if (digits > 0 && octet === 0) return -1; // a leading zero
      octet = octet * 10 + (ch - 48);
      if (++digits > 3 || octet > 255) return -1;
    } else {
      return -1;
    }
  }
  return digits === 0 || dots !== 3 ? -1 : v * 256 + octet;
}

/** `s` is a canonical dotted quad (see dottedQuadValue). */
export function isCanonicalIPv4(s: string): boolean {
  return dottedQuadValue(s) >= 0;
}

/** canonicalIP(s), skipping the parser for canonical IPv4 (which it returns unchanged). */
export function canonicalIPFast(s: string): string | undefined {
  return dottedQuadValue(s) >= 0 ? s : canonicalIP(s);
}

/** The family of an address (undefined when it is none), skipping the parser for canonical IPv4. */
export function familyOfIP(s: string): IPFamily | undefined {
  return dottedQuadValue(s) >= 0 ? 'IPv4' : parseIP(s)?.family;
}

/** The family a valid address or CIDR is written in (`:` only in IPv6), without parsing it. */
export function writtenFamily(s: string): IPFamily {
  return s.includes(':') ? 'IPv6' : 'IPv4';
}

function hostMask(family: IPFamily, prefix: number): bigint {
  return (1n << BigInt(familyBits(family) - prefix)) - 1n;
}

/** Parses `addr/prefix` as ParseCIDRSloppy; host bits may be set in the input. */
export function parseCIDR(s: string): ParsedCIDR | null {
  if (typeof s !== 'string') return null;
  const slash = s.indexOf('/');
  if (slash < 0) return null;
  const addr = s.slice(0, slash);
  const bitsText = s.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(bitsText)) return null;
  const prefix = Number(bitsText);
  let ip = parseIP(addr);
  if (ip === null) return null;
  // Go keeps `::ffff:a.b.c.d/n` as a 128-bit mask length; treat it as IPv6 space then.
  if (ip.family === 'IPv4' && addr.includes(':')) {
    ip = { family: 'IPv6', value: ip.value | MAPPED_PREFIX };
  }
  if (prefix > familyBits(ip.family)) return null;
  const base = ip.value & ~hostMask(ip.family, prefix);
  return { family: ip.family, base, prefix, ip };
}

export function isCIDR(s: string): boolean {
  return parseCIDR(s) !== null;
}

export function formatCIDR(c: { family: IPFamily; base: bigint; prefix: number }): string {
  return `${formatIP({ family: c.family, value: c.base })}/${c.prefix}`;
}

/** Canonical network form (`10.96.0.1/12` → `10.96.0.0/12`). */
export function canonicalCIDR(s: string): string | undefined {
  const c = parseCIDR(s);
  return c ? formatCIDR(c) : undefined;
}

function asCIDR(c: string | ParsedCIDR): ParsedCIDR {
  const p = typeof c === 'string' ? parseCIDR(c) : c;
  if (p === null) throw new RangeError(`invalid CIDR ${JSON.stringify(c)}`);
  return p;
}

function asIP(ip: string | ParsedIP): ParsedIP {
  const p = typeof ip === 'string' ? parseIP(ip) : ip;
  if (p === null) throw new RangeError(`invalid IP ${JSON.stringify(ip)}`);
  return p;
}

/** Number of addresses in the CIDR (including network and broadcast). */
export function cidrSize(cidr: string | ParsedCIDR): bigint {
  const c = asCIDR(cidr);
  return 1n << BigInt(familyBits(c.family) - c.prefix);
}

/** Whether `ip` lies inside `cidr` (same family). Invalid input throws RangeError. */
export function cidrContains(cidr: string | ParsedCIDR, ip: string | ParsedIP): boolean {
  const c = asCIDR(cidr);
  const a = asIP(ip);
  if (c.family !== a.family) return false;
  return (a.value & ~hostMask(c.family, c.prefix)) === c.base;
}

/** Whether two CIDRs share any address. */
export function cidrsOverlap(a: string | ParsedCIDR, b: string | ParsedCIDR): boolean {
  const x = asCIDR(a);
  const y = asCIDR(b);
  if (x.family !== y.family) return false;
  const p = Math.min(x.prefix, y.prefix);
  const m = ~hostMask(x.family, p);
  return (x.base & m) === (y.base & m);
}

/** The address at offset `n` from the network address (0 = network address itself). */
export function nthAddress(cidr: string | ParsedCIDR, n: bigint | number): string {
  const c = asCIDR(cidr);
  const i = BigInt(n);
  if (i < 0n || i >= cidrSize(c)) {
    throw new RangeError(`offset ${i} outside ${formatCIDR(c)}`);
  }
  return formatIP({ family: c.family, value: c.base + i });
}

/** The offset of `ip` from the network address of `cidr`, or -1n when outside it. */
export function addressIndex(cidr: string | ParsedCIDR, ip: string | ParsedIP): bigint {
  const c = asCIDR(cidr);
  const a = asIP(ip);
  if (!cidrContains(c, a)) return -1n;
  return a.value - c.base;
}

/** The last address of the CIDR (the IPv4 broadcast address). */
export function lastAddress(cidr: string | ParsedCIDR): string {
  const c = asCIDR(cidr);
  return formatIP({ family: c.family, value: c.base + cidrSize(c) - 1n });
}

/** `ip + n` in the same family; throws RangeError on overflow. */
export function addToIP(ip: string | ParsedIP, n: bigint | number): string {
  const a = asIP(ip);
  const v = a.value + BigInt(n);
  if (v < 0n || v >= 1n << BigInt(familyBits(a.family))) {
    throw new RangeError(`address overflow: ${formatIP(a)} + ${n}`);
  }
  return formatIP({ family: a.family, value: v });
}

/** Compares two addresses (IPv4 sorts before IPv6), for sorting. */
export function compareIPs(a: string | ParsedIP, b: string | ParsedIP): number {
  const x = asIP(a);
  const y = asIP(b);
  if (x.family !== y.family) return x.family === 'IPv4' ? -1 : 1;
  return x.value < y.value ? -1 : x.value > y.value ? 1 : 0;
}

/**
 * The `n`-th subnet of size `/newPrefix` carved from `cidr` (node Pod CIDRs from the cluster
 * CIDR: `subnetAt('10.244.0.0/16', 24, 3)` → `10.244.3.0/24`).
 */
export function subnetAt(cidr: string | ParsedCIDR, newPrefix: number, n: bigint | number): string {
  const c = asCIDR(cidr);
  const bits = familyBits(c.family);
  if (newPrefix < c.prefix || newPrefix > bits) {
    throw new RangeError(`/${newPrefix} does not fit in ${formatCIDR(c)}`);
  }
  const i = BigInt(n);
  if (i < 0n || i >= 1n << BigInt(newPrefix - c.prefix)) {
    throw new RangeError(`subnet ${i} outside ${formatCIDR(c)}`);
  }
  const base = c.base + (i << BigInt(bits - newPrefix));
  return formatCIDR({ family: c.family, base, prefix: newPrefix });
}

/** A flag's CIDR list (`"a,b"`, or already a list), trimmed, empty entries dropped. */
export function cidrList(input: string | readonly string[]): string[] {
  return (typeof input === 'string' ? input.split(',') : [...input])
    .map((s) => s.trim()).filter((s) => s !== '');
}
