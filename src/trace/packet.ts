// The packet the tracer follows, and parsing of the addresses users type.

import { canonicalIP, dottedQuadValue, ipFamilyOf, parseCIDR, parseIP, type ParsedIP } from '../api/net.js';
import { kdpError } from '../errors.js';

export type TraceProtocol = 'tcp' | 'udp' | 'sctp' | 'icmp';

export interface Packet {
  readonly src: string;
  readonly dst: string;
  readonly proto: TraceProtocol;
  readonly sport: number;
  /** 0 for icmp. */
  readonly dport: number;
}

export interface HostPort {
  readonly ip: string;
  /** undefined when the user gave none. */
  readonly port?: number;
}

/** The packet after DNAT / SNAT (spelled out rather than spread: one object shape). */
export function withDst(p: Packet, dst: string, dport: number): Packet {
  return { src: p.src, dst, proto: p.proto, sport: p.sport, dport };
}

export function withSrc(p: Packet, src: string): Packet {
  return { src, dst: p.dst, proto: p.proto, sport: p.sport, dport: p.dport };
}

/** `ip`, `ip:port`, `[v6]`, `[v6]:port`, or a bare v6 address. Canonicalises the IP. */
export function parseHostPort(s: string, what: string): HostPort {
  let ipText = s;
  let portText: string | undefined;
  const v6 = /^\[([^\]]+)\](?::(.*))?$/.exec(s);
  if (v6) {
    ipText = v6[1]!;
    portText = v6[2];
  } else if ((s.match(/:/g) ?? []).length === 1) {
    [ipText, portText] = s.split(':') as [string, string];
  }
  const ip = canonicalIP(ipText);
  if (!ip) throw kdpError('KDP_TRACE', `${what}: "${s}" is not an IP address (write IPv6 with a port as [addr]:port)`);
  if (portText === undefined) return { ip };
  return { ip, port: parsePort(portText, what) };
}

export function parsePort(s: string, what: string): number {
  const n = Number(s);
  if (!/^\d+$/.test(s) || n < 1 || n > 65535) throw kdpError('KDP_TRACE', `${what}: port "${s}" is out of range 1-65535`);
  return n;
}

export function parseProtocol(s: string): TraceProtocol {
  const p = s.toLowerCase();
  if (p === 'tcp' || p === 'udp' || p === 'sctp' || p === 'icmp') return p;
  throw kdpError('KDP_TRACE', `--proto: "${s}" is not one of tcp, udp, sctp, icmp`);
}

/** `a.b.c.d` matches `a.b.c.d` or `a.b.c.d/32`; CIDRs by containment. */
export function addressMatches(spec: string, ip: string): boolean {
  return compileAddress(spec)(ip);
}

const compiledSpecs = new Map<string, (ip: string) => boolean>();
const parsedIPs = new Map<string, ParsedIP | null>();

function parsedIP(ip: string): ParsedIP | null {
  let p = parsedIPs.get(ip);
  if (p === undefined) {
    if (parsedIPs.size > 100_000) parsedIPs.clear();
    p = parseIP(ip);
    parsedIPs.set(ip, p);
  }
  return p;
}

/**
 * A matcher for an address spec, parsed once (the tracer's hot path). Packet addresses are
 * canonical strings, so a single address compares as a string; a CIDR by masked value.
 * Memoised: rule tables repeat the same few specs many times.
 */
export function compileAddress(spec: string): (ip: string) => boolean {
  let m = compiledSpecs.get(spec);
  if (m) return m;
  if (spec.includes('/')) {
    const c = parseCIDR(spec);
    if (!c) throw kdpError('KDP_TRACE', `not an address or CIDR: ${spec}`);
    const bits = c.family === 'IPv4' ? 32 : 128;
    const mask = ((1n << BigInt(bits)) - 1n) ^ ((1n << BigInt(bits - c.prefix)) - 1n);
    if (c.family === 'IPv4') {
      // Plain numbers for IPv4 (BigInt arithmetic allocates); other spellings take the
      // general path below.
      const mask4 = Number(mask);
      const base4 = Number(c.base);
      const slow = m4Slow(mask, c.base);
      m = (ip) => {
        const v = dottedQuadValue(ip);
        return v < 0 ? slow(ip) : ((v & mask4) >>> 0) === base4;
      };
    } else {
      m = (ip) => {
        const a = parsedIP(ip);
        return a !== null && a.family === c.family && (a.value & mask) === c.base;
      };
    }
  } else {
    const canon = canonicalIP(spec);
    m = (ip) => ip === canon;
  }
  if (compiledSpecs.size > 100_000) compiledSpecs.clear();
  compiledSpecs.set(spec, m);
  return m;
}

function m4Slow(mask: bigint, base: bigint): (ip: string) => boolean {
  return (ip) => {
    const a = parsedIP(ip);
    return a !== null && a.family === 'IPv4' && (a.value & mask) === base;
  };
}

export function familyOf(ip: string): 'IPv4' | 'IPv6' {
  return ipFamilyOf(ip) ?? 'IPv4';
}

export function endpointString(ip: string, port: number | undefined): string {
  if (port === undefined || port === 0) return ip;
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** Ephemeral source port used when the user does not give one (deterministic). */
export const DEFAULT_SPORT = 40000;
