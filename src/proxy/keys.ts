// Small helpers over the map keys of `types.ts`, shared by the trackers and every backend.

import type { IPFamily } from './types.js';

/**
 * The `ns/name` of a service-port key (`ns/name:port/PROTO` or `ns/name/PROTO`). Namespaces,
 * names and port names never contain ':' and names never contain '/', so this is exact.
 */
export function serviceNameOfKey(key: string): string {
  const colon = key.indexOf(':');
  if (colon >= 0) return key.slice(0, colon);
  return key.slice(0, key.lastIndexOf('/'));
}

/** `ip:port`, or `[ip]:port` for IPv6 (Go's net.JoinHostPort). */
export function joinHostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

export function otherFamily(f: IPFamily): IPFamily {
  return f === 'IPv4' ? 'IPv6' : 'IPv4';
}
