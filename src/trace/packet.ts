// The packet the tracer follows, and parsing of the addresses users type.

import { canonicalIP, cidrContains, ipFamilyOf } from '../api/net.js';
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
  if (spec.includes('/')) return cidrContains(spec, ip);
  return canonicalIP(spec) === ip;
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
