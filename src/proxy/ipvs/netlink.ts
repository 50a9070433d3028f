// The `kube-ipvs0` dummy device side (upstream netlink.go / netlink_linux.go): which host
// addresses count as node addresses, and the bind/unbind work of one sync.

import { isIP } from 'node:net';
import { DUMMY_DEVICE, hostPrefix } from '../../ruleset/ipvs/addresses.js';
import type { IPFamily } from '../types.js';

export { DUMMY_DEVICE };

/** Upstream isValidForSet: this family, not loopback, not IPv6 link-local. */
export function isValidForSet(ip: string, family: IPFamily): boolean {
  const v = isIP(ip);
  if (v !== (family === 'IPv4' ? 4 : 6)) return false;
  if (v === 4) return !ip.startsWith('127.');
  const lower = ip.toLowerCase();
  return lower !== '::1' && !/^fe[89ab][0-9a-f]:/.test(lower);
}

/** Upstream GetAllLocalAddressesExcept(kube-ipvs0), from the host's known addresses. */
export function nodeAddressSet(hostAddresses: readonly string[], family: IPFamily): Set<string> {
  return new Set(hostAddresses.filter((ip) => isValidForSet(ip, family)));
}

/** `ip addr` commands that move the device from `bound` to `wanted` (adds first, as upstream). */
export function addressOps(bound: ReadonlySet<string>, wanted: ReadonlySet<string>): string[] {
  const ops: string[] = [];
  const cmd = (verb: string, a: string) => `ip addr ${verb} ${hostPrefix(a)} dev ${DUMMY_DEVICE}`;
  for (const a of wanted) if (!bound.has(a)) ops.push(cmd('add', a));
  for (const a of bound) if (!wanted.has(a)) ops.push(cmd('del', a));
  return ops;
}
