// Name helpers of the cluster DNS: lower-cased, dot-free-at-the-end names; the reverse names of
// IPs (in-addr.arpa / ip6.arpa) both ways; the dashed-IP labels CoreDNS uses for pods and for
// endpoints without a hostname.

import { canonicalIP, formatIP, parseIP } from '../api/net.js';

/** `Web.Default.svc.cluster.local.` → `web.default.svc.cluster.local` (DNS names are caseless). */
export function normalizeName(name: string): string {
  const n = name.toLowerCase();
  return n.endsWith('.') ? n.slice(0, -1) : n;
}

/** Whether `name` is `zone` or below it (both normalised; the root zone '' holds every name). */
export function inZone(name: string, zone: string): boolean {
  return zone === '' || name === zone || name.endsWith(`.${zone}`);
}

/** The labels of `name` left of `zone` (name must be in zone), e.g. `['web', 'default', 'svc']`. */
export function labelsBelow(name: string, zone: string): string[] {
  if (name === zone) return [];
  const base = zone === '' ? name : name.slice(0, -(zone.length + 1));
  return base === '' ? [] : base.split('.');
}

export const REVERSE_V4 = 'in-addr.arpa';
export const REVERSE_V6 = 'ip6.arpa';

/** `10.96.0.10` → `10.0.96.10.in-addr.arpa`; IPv6 as 32 reversed nibbles under ip6.arpa. */
export function reverseName(ip: string): string | undefined {
  const p = parseIP(ip);
  if (!p) return undefined;
  if (p.family === 'IPv4') return `${formatIP(p).split('.').reverse().join('.')}.${REVERSE_V4}`;
  const hex = p.value.toString(16).padStart(32, '0');
  return `${[...hex].reverse().join('.')}.${REVERSE_V6}`;
}

/**
 * The IP a full reverse name stands for (canonical text), or undefined when the name is not one
 * (too few or too many labels, a bad octet or nibble): such names are not answered here.
 */
export function ipOfReverseName(name: string): string | undefined {
  if (inZone(name, REVERSE_V4)) {
    const labels = labelsBelow(name, REVERSE_V4);
    const octet = (l: string) => /^(0|[1-9][0-9]{0,2})$/.test(l);
    if (labels.length !== 4 || !labels.every(octet)) return undefined;
    return canonicalIP(labels.reverse().join('.'));
  }
  if (inZone(name, REVERSE_V6)) {
    const labels = labelsBelow(name, REVERSE_V6);
    if (labels.length !== 32 || !labels.every((l) => /^[0-9a-f]$/.test(l))) return undefined;
    const hex = labels.reverse().join('');
    return formatIP({ family: 'IPv6', value: BigInt(`0x${hex}`) });
  }
  return undefined;
}

/** Whether the name is inside one of the reverse zones. */
export function isReverseName(name: string): boolean {
  return inZone(name, REVERSE_V4) || inZone(name, REVERSE_V6);
}

/**
 * CoreDNS's endpoint label for an address without hostname: `10.244.1.5` → `10-244-1-5`,
 * `fd00::` → `fd00--0` (a trailing `-` gets a `0`, as CoreDNS's endpointHostname).
 */
export function dashedIP(ip: string): string {
  if (!ip.includes(':')) return ip.replaceAll('.', '-');
  const d = ip.replaceAll(':', '-');
  return d.endsWith('-') ? `${d}0` : d;
}

/**
 * CoreDNS's pod-label parse (`pods insecure`): exactly three `-` and no `--` is IPv4, anything
 * else has `-` → `:` (IPv6). Returns the canonical IP, or undefined when it does not parse.
 */
export function ipOfDashedLabel(label: string): string | undefined {
  const dashes = label.split('-').length - 1;
  const text = dashes === 3 && !label.includes('--') ? label.replaceAll('-', '.')
    : label.replaceAll('-', ':');
  return canonicalIP(text);
}
