// host-local's Range: a subnet with an inclusive [rangeStart, rangeEnd] and a gateway that is
// never handed out. `canonicalizeRange` fills defaults and validates with host-local's messages:
// gateway and rangeStart default to network+1; rangeEnd to broadcast-1 (IPv4) or the last
// address (IPv6).

import { formatIP, parseCIDR, parseIP, type IPFamily, type ParsedCIDR } from '../../api/net.js';
import { kdpError } from '../../errors.js';

/** A range as written in the CNI config. */
export interface RangeConfig {
  subnet: string;
  rangeStart?: string;
  rangeEnd?: string;
  gateway?: string;
}

/** A validated range; addresses are numeric for cheap iteration. */
export interface Range {
  readonly subnet: ParsedCIDR;
  readonly family: IPFamily;
  readonly start: bigint;
  readonly end: bigint;
  /** undefined only if the config set no gateway and the default lies outside the range. */
  readonly gateway: bigint;
}

function ipamError(msg: string): Error {
  return kdpError('KDP_CONFIG', msg);
}

export function canonicalizeRange(cfg: RangeConfig): Range {
  const subnet = parseCIDR(cfg.subnet);
  if (!subnet) throw ipamError(`invalid CIDR address: ${cfg.subnet}`);
  const bits = subnet.family === 'IPv4' ? 32 : 128;
  if (subnet.prefix > bits - 2) throw ipamError(`Network ${cfg.subnet} too small to allocate from`);
  if (subnet.ip.value !== subnet.base) {
    const net = formatIP({ family: subnet.family, value: subnet.base });
    throw ipamError(`Network has host bits set. For a subnet mask of length ${subnet.prefix}` +
      ` the network address is ${net}`);
  }
  const last = subnet.base + (1n << BigInt(bits - subnet.prefix)) - 1n;
  const inSubnet = (name: string, s: string): bigint => {
    const ip = parseIP(s);
    if (!ip || ip.family !== subnet.family || ip.value < subnet.base || ip.value > last) {
      throw ipamError(`${name} ${s} not in network ${cfg.subnet}`);
    }
    return ip.value;
  };
  const gateway = cfg.gateway ? inGatewayFamily(cfg.gateway, subnet) : subnet.base + 1n;
  const start = cfg.rangeStart ? inSubnet('RangeStart', cfg.rangeStart) : subnet.base + 1n;
  const end = cfg.rangeEnd ? inSubnet('RangeEnd', cfg.rangeEnd)
    : subnet.family === 'IPv4' ? last - 1n : last;
  return { subnet, family: subnet.family, start, end, gateway };
}

function inGatewayFamily(s: string, subnet: ParsedCIDR): bigint {
  const ip = parseIP(s);
  if (!ip || ip.family !== subnet.family) throw ipamError(`invalid gateway ${s}`);
  return ip.value;
}

export function rangeContains(r: Range, ip: string): boolean {
  const p = parseIP(ip);
  return !!p && p.family === r.family && p.value >= r.start && p.value <= r.end;
}

export function rangesOverlap(a: Range, b: Range): boolean {
  return a.family === b.family && a.start <= b.end && b.start <= a.end;
}

export const fmt = (r: Range, v: bigint): string => formatIP({ family: r.family, value: v });

/** `start-end`, as host-local prints a range. */
export function rangeString(r: Range): string {
  return `${fmt(r, r.start)}-${fmt(r, r.end)}`;
}
