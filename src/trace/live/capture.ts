// Packet captures along a probe's path: one tcpdump per (namespace, interface), each writing a
// pcap file that is kept (Wireshark reads it), started before the probe and awaited until it
// listens, stopped after it, then read back and decoded.

import { ensurePrivateDirSync } from '../../util/private-files.js';
import { join } from 'node:path';
import { kdpError } from '../../errors.js';
import { startWatcher, tcpdumpListening, type Watcher } from './capture-process.js';
import { decodeFrame, readPcap, type DecodedPacket } from './pcap.js';

/** One interface to watch. */
export interface CapturePoint {
  readonly netns: string;
  readonly iface: string;
  /** For people: `pod default/web-1 eth0`, `node n1 cni0`, `underlay kdp-n1`. */
  readonly label: string;
  /** The node this interface belongs to (the underlay: none). */
  readonly node?: string;
  /** A pod's eth0: the pod's address (a probe arriving for it was delivered). */
  readonly localIP?: string;
}

/** What the probe looks like on the wire before any NAT. */
export interface CaptureFilter {
  readonly protocol: 'tcp' | 'udp' | 'icmp';
  readonly sport?: number;
  readonly dst?: string;
  readonly dport?: number;
  /** Where DNAT may send it (`ip:port`): SNAT may change the source port on the way. */
  readonly servers?: readonly string[];
}

export interface CapturedPacket {
  readonly timeUs: number;
  readonly packet: DecodedPacket;
}

export interface CaptureResult {
  readonly point: CapturePoint;
  /** The pcap file (kept). */
  readonly file: string;
  readonly packets: readonly CapturedPacket[];
  /** Why this interface could not be captured (the others still were). */
  readonly error?: string;
}

export interface RunningCaptures {
  /** Stops every tcpdump and reads their files. */
  stop(): Promise<CaptureResult[]>;
}

/**
 * The BPF filter: the probe's transport by its source port (kept through DNAT, and through SNAT
 * when the port is free) or by its original destination, plus every ICMP packet (errors about the
 * probe, and the probe itself for ping).
 */
export function bpfFilter(f: CaptureFilter): string {
  if (f.protocol === 'icmp') return 'icmp or icmp6';
  const alts: string[] = [];
  if (f.sport !== undefined) alts.push(`port ${f.sport}`);
  if (f.dst !== undefined && f.dport !== undefined) {
    alts.push(`(host ${f.dst} and port ${f.dport})`);
  }
  for (const s of (f.servers ?? []).slice(0, MAX_SERVERS)) {
    const at = s.lastIndexOf(':');
    const host = s.slice(0, at).replace(/^\[|\]$/g, '');
    alts.push(`(host ${host} and port ${s.slice(at + 1)})`);
  }
  const which = alts.length ? ` and (${alts.join(' or ')})` : '';
  return `(${f.protocol}${which}) or icmp or icmp6`;
}

/** Endpoints named in the filter at most (a Service with more still shows by source port). */
const MAX_SERVERS = 32;

/** `<netns>-<iface>.pcap` (names are kernel names: safe as file names). */
export function pcapFileName(p: CapturePoint): string {
  return `${p.netns}-${p.iface}.pcap`;
}

export async function startCaptures(
  points: readonly CapturePoint[], dir: string, f: CaptureFilter,
): Promise<RunningCaptures> {
  ensurePrivateDirSync(dir);
  const filter = bpfFilter(f);
  const started = await Promise.all(points.map(async (point) => {
    const file = join(dir, pcapFileName(point));
    try {
      const w = await startWatcher({
        netns: point.netns, file: 'tcpdump',
        // -Z root: keep the privileges tcpdump would drop, so it can write into the data dir.
        args: [
          '-i', point.iface, '-w', file, '-U', '-n', '--immediate-mode', '-s', '262', '-Z', 'root',
          filter,
        ],
        ready: tcpdumpListening,
      });
      return { point, file, w };
    } catch (e) {
      return { point, file, error: (e as Error).message };
    }
  }));
  if (started.length > 0 && started.every((s) => s.error)) {
    throw kdpError('KDP_LIVE_CAPTURE', `no capture could start: ${started[0]!.error}`);
  }
  return {
    async stop() {
      await Promise.all(started.map((s) => s.w?.stop()));
      return Promise.all(started.map((s) => collect(s)));
    },
  };
}

interface Started {
  readonly point: CapturePoint;
  readonly file: string;
  readonly w?: Watcher;
  readonly error?: string;
}

async function collect(s: Started): Promise<CaptureResult> {
  if (s.error) return { point: s.point, file: s.file, packets: [], error: s.error };
  try {
    const pcap = await readPcap(s.file);
    const packets: CapturedPacket[] = [];
    for (const r of pcap.records) {
      const packet = decodeFrame(pcap.linkType, r.data);
      if (packet) packets.push({ timeUs: r.timeUs, packet });
    }
    return { point: s.point, file: s.file, packets };
  } catch (e) {
    return { point: s.point, file: s.file, packets: [], error: (e as Error).message };
  }
}
