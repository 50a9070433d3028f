import { isIP } from 'node:net';

/** `ip:port`, IPv6 as `[ip]:port` (Go's net.JoinHostPort). */
export function joinHostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** Inverse of `joinHostPort`; undefined when the text is not a valid ip:port. */
export function splitHostPort(text: string): { ip: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)):(\d{1,5})$/.exec(text);
  if (m === null) return undefined;
  const ip = m[1] ?? m[2] ?? '';
  const port = Number(m[3]);
  const family = isIP(ip);
  if (family === 0 || (m[1] !== undefined && family !== 6) || port > 65535) return undefined;
  return { ip, port };
}

/** IPv4 addresses as a sortable key; IPv6 expanded to 32 hex digits (sorted after IPv4). */
export function ipSortKey(ip: string): string {
  if (!ip.includes(':')) {
    let value = 0;
    let octet = 0;
    for (let i = 0; i < ip.length; i++) {
      const c = ip.charCodeAt(i);
      if (c === 46) {
        value = value * 256 + octet;
        octet = 0;
      } else {
        octet = octet * 10 + (c - 48);
      }
    }
    return `4${(value * 256 + octet).toString(16).padStart(8, '0')}`;
  }
  const [head = '', tail = ''] = ip.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === '' ? [] : tail.split(':');
  const fill = ip.includes('::') ? Array(8 - h.length - t.length).fill('0') : [];
  return `6${[...h, ...fill, ...t].map((g) => g.padStart(4, '0')).join(':')}`;
}
