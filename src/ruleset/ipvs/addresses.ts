// The addresses kube-proxy binds on the `kube-ipvs0` dummy device: one `ip/prefix` per line
// (`/32` for IPv4, `/128` for IPv6, as upstream's netlink bind does), sorted numerically.

import { isIP } from 'node:net';
import { ipSortKey } from './address.js';
import { joinLines, parseError, splitLines } from './parse-error.js';

export const DUMMY_DEVICE = 'kube-ipvs0';

/** `10.96.0.1` → `10.96.0.1/32`, `fd00::1` → `fd00::1/128`. */
export function hostPrefix(ip: string): string {
  return `${ip}/${ip.includes(':') ? 128 : 32}`;
}

export function sortAddresses(addrs: Iterable<string>): string[] {
  const key = (a: string) => ipSortKey(a.split('/')[0] ?? '');
  return [...addrs].map((a) => ({ a, k: key(a) }))
    .sort((x, y) => (x.k < y.k ? -1 : x.k > y.k ? 1 : 0)).map((x) => x.a);
}

export function formatDummyAddresses(addrs: readonly string[]): string {
  return joinLines(addrs);
}

export function parseDummyAddresses(text: string, firstLine = 1): string[] {
  return splitLines(text).map((line, i) => {
    const [ip = '', len] = line.split('/');
    const max = isIP(ip) === 4 ? 32 : 128;
    if (isIP(ip) === 0 || len === undefined || !/^\d+$/.test(len) || Number(len) > max) {
      throw parseError('kube-ipvs0', i + firstLine, line, 'expected ADDRESS/PREFIX');
    }
    return line;
  });
}
