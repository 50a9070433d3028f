// Reading the pcap files tcpdump writes: the `pcap-parser` package splits the file into records
// (libpcap format 2.4, either byte order); the headers of each frame are decoded here — Ethernet
// (and Linux cooked capture), IPv4, IPv6, TCP, UDP, ICMP and ICMPv6, with the packet an ICMP error
// quotes — enough to see addresses and ports change from hop to hop.

import { createRequire } from 'node:module';
import type { EventEmitter } from 'node:events';
import { kdpError } from '../../errors.js';

interface PcapParserModule {
  parse(input: string): EventEmitter;
}

const require = createRequire(import.meta.url);
const pcapParser = require('pcap-parser') as PcapParserModule;

export interface PcapRecord {
  /** Capture time in microseconds since the epoch. */
  readonly timeUs: number;
  readonly data: Buffer;
}

export interface PcapFile {
  readonly linkType: number;
  readonly records: readonly PcapRecord[];
}

/** A record as pcap-parser emits it. */
interface RawRecord {
  readonly header: { timestampSeconds: number; timestampMicroseconds: number };
  readonly data: Buffer;
}

export const LINKTYPE_ETHERNET = 1;
export const LINKTYPE_LINUX_SLL = 113;

/** Reads a whole pcap file (rejects with KDP_LIVE_CAPTURE for a file that is not one). */
export function readPcap(path: string): Promise<PcapFile> {
  return new Promise((resolve, reject) => {
    const p = pcapParser.parse(path);
    let linkType = LINKTYPE_ETHERNET;
    const records: PcapRecord[] = [];
    p.on('globalHeader', (h: { linkLayerType: number }) => { linkType = h.linkLayerType; });
    p.on('packet', (pkt: RawRecord) => {
      records.push({
        timeUs: pkt.header.timestampSeconds * 1e6 + pkt.header.timestampMicroseconds,
        data: Buffer.from(pkt.data),
      });
    });
    p.once('error', (e: Error) => reject(kdpError('KDP_LIVE_CAPTURE', `${path}: ${e.message}`)));
    p.once('end', () => resolve({ linkType, records }));
  });
}

export type L4Protocol = 'tcp' | 'udp' | 'icmp' | 'icmpv6' | 'other';

/** The network and transport headers of one frame. Ports are 0 where the protocol has none. */
export interface DecodedPacket {
  readonly family: 'IPv4' | 'IPv6';
  readonly src: string;
  readonly dst: string;
  readonly protocol: L4Protocol;
  readonly sport: number;
  readonly dport: number;
  /** TCP flags as letters (`S`, `SA`, `A`, `FA`, `R`, `PA`…). */
  readonly flags?: string;
  readonly icmpType?: number;
  readonly icmpCode?: number;
  /** For ICMP errors (unreachable, time exceeded): the packet the error is about. */
  readonly quoted?: DecodedPacket;
  readonly ttl: number;
}

/** Decodes one frame of the given link type; undefined for non-IP frames (ARP, LLDP…). */
export function decodeFrame(linkType: number, frame: Buffer): DecodedPacket | undefined {
  let off: number;
  let etherType: number;
  if (linkType === LINKTYPE_ETHERNET) {
    if (frame.length < 14) return undefined;
    etherType = frame.readUInt16BE(12);
    off = 14;
    while (etherType === 0x8100 && frame.length >= off + 4) {
      etherType = frame.readUInt16BE(off + 2);
      off += 4;
    }
  } else if (linkType === LINKTYPE_LINUX_SLL) {
    if (frame.length < 16) return undefined;
    etherType = frame.readUInt16BE(14);
    off = 16;
  } else {
    return undefined;
  }
  if (etherType === 0x0800) return decodeIPv4(frame, off);
  if (etherType === 0x86dd) return decodeIPv6(frame, off);
  return undefined;
}

export function decodeIPv4(b: Buffer, off: number): DecodedPacket | undefined {
  if (b.length < off + 20 || b[off]! >> 4 !== 4) return undefined;
  const ihl = (b[off]! & 0x0f) * 4;
  const proto = b[off + 9]!;
  const src = [...b.subarray(off + 12, off + 16)].join('.');
  const dst = [...b.subarray(off + 16, off + 20)].join('.');
  return transport({ family: 'IPv4', src, dst, ttl: b[off + 8]! }, proto, b, off + ihl);
}

export function decodeIPv6(b: Buffer, off: number): DecodedPacket | undefined {
  if (b.length < off + 40 || b[off]! >> 4 !== 6) return undefined;
  const src = ipv6Text(b.subarray(off + 8, off + 24));
  const dst = ipv6Text(b.subarray(off + 24, off + 40));
  return transport({ family: 'IPv6', src, dst, ttl: b[off + 7]! }, b[off + 6]!, b, off + 40);
}

type IPPart = Pick<DecodedPacket, 'family' | 'src' | 'dst' | 'ttl'>;

function transport(ip: IPPart, proto: number, b: Buffer, at: number): DecodedPacket {
  const ports = b.length >= at + 4
    ? { sport: b.readUInt16BE(at), dport: b.readUInt16BE(at + 2) }
    : { sport: 0, dport: 0 };
  if (proto === 6) {
    const flags = b.length >= at + 14 ? tcpFlags(b[at + 13]!) : undefined;
    return { ...ip, protocol: 'tcp', ...ports, ...(flags === undefined ? {} : { flags }) };
  }
  if (proto === 17) return { ...ip, protocol: 'udp', ...ports };
  if (proto === 1 || proto === 58) {
    const protocol: L4Protocol = proto === 1 ? 'icmp' : 'icmpv6';
    if (b.length < at + 8) return { ...ip, protocol, sport: 0, dport: 0 };
    const icmpType = b[at]!;
    const icmpCode = b[at + 1]!;
    const isError = proto === 1 ? [3, 4, 5, 11, 12].includes(icmpType) : icmpType < 128;
    const quoted = isError
      ? (proto === 1 ? decodeIPv4(b, at + 8) : decodeIPv6(b, at + 8))
      : undefined;
    // Echo request/reply: the identifier stands where a port would be (as conntrack keys it).
    const id = !isError ? b.readUInt16BE(at + 4) : 0;
    return {
      ...ip, protocol, sport: id, dport: 0, icmpType, icmpCode, ...(quoted ? { quoted } : {}),
    };
  }
  return { ...ip, protocol: 'other', sport: 0, dport: 0 };
}

const FLAG_LETTERS: Array<[number, string]> = [
  [0x02, 'S'], [0x01, 'F'], [0x04, 'R'], [0x08, 'P'], [0x10, 'A'],
];

function tcpFlags(v: number): string {
  return FLAG_LETTERS.filter(([bit]) => v & bit).map(([, l]) => l).join('') || '.';
}

function ipv6Text(b: Buffer): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(b.readUInt16BE(i));
  // RFC 5952: the longest run (≥ 2) of zero groups becomes `::`.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) { best = i; bestLen = j - i; }
    i = j > i ? j - 1 : i;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** `10.0.0.1:80 → 10.0.0.2:40000 SA`, `[fd00::1]:53 …`, `icmp 3/3 (about …)`. */
export function describePacket(p: DecodedPacket): string {
  const ep = (ip: string, port: number) =>
    (port === 0 ? ip : p.family === 'IPv6' ? `[${ip}]:${port}` : `${ip}:${port}`);
  if (p.protocol === 'icmp' || p.protocol === 'icmpv6') {
    const about = p.quoted ? ` about ${describePacket(p.quoted)}` : '';
    const what = `${p.protocol} type ${p.icmpType ?? '?'} code ${p.icmpCode ?? '?'}`;
    return `${p.src} → ${p.dst} ${what}${about}`;
  }
  const flags = p.flags ? ` ${p.flags}` : '';
  return `${ep(p.src, p.sport)} → ${ep(p.dst, p.dport)} ${p.protocol}${flags}`;
}
