// A DNS client for `kdp dns lookup`: one question to one server over UDP (EDNS0, 1232 bytes),
// retried over TCP when the reply comes back truncated, as dig and glibc do; and the records
// of a reply rendered one per line in dig's zone-file form.

import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket, type RecordType } from 'dns-packet';
import { ipFamilyOf } from '../api/net.js';
import { kdpError } from '../errors.js';
import { EDNS_UDP_SIZE } from './message.js';

export interface Reply {
  readonly rcode: string;
  readonly authoritative: boolean;
  /** Truncated over UDP and then asked again over TCP. */
  readonly retriedOverTcp: boolean;
  readonly answers: readonly Answer[];
  readonly authorities: readonly Answer[];
  readonly additionals: readonly Answer[];
}

export interface AskOptions {
  readonly host: string;
  readonly port: number;
  readonly tcp?: boolean;
  readonly timeoutMs?: number;
}

function encode(name: string, type: string): Buffer {
  return dnsPacket.encode({ type: 'query', id: Math.floor(Math.random() * 65536),
    flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type: type as RecordType, class: 'IN' }],
    additionals: [{ name: '.', type: 'OPT', udpPayloadSize: EDNS_UDP_SIZE, extendedRcode: 0,
      ednsVersion: 0, flags: 0, flag_do: false, options: [] } as unknown as Answer] });
}

const timeoutError = (o: AskOptions, how: string) => kdpError('KDP_TIMEOUT',
  `no ${how} reply from ${o.host.includes(':') ? `[${o.host}]` : o.host}:${o.port} within ` +
  `${o.timeoutMs ?? 2000} ms`);

function overUdp(msg: Buffer, o: AskOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = createSocket(ipFamilyOf(o.host) === 'IPv6' ? 'udp6' : 'udp4');
    const t = setTimeout(() => { s.close(); reject(timeoutError(o, 'UDP')); }, o.timeoutMs ?? 2000);
    s.on('error', (e) => { clearTimeout(t); s.close(); reject(e); });
    s.on('message', (m) => {
      if (m.length < 2 || m.readUInt16BE(0) !== msg.readUInt16BE(0)) return;
      clearTimeout(t);
      s.close();
      resolve(m);
    });
    s.send(msg, o.port, o.host);
  });
}

function overTcp(msg: Buffer, o: AskOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: o.host, port: o.port });
    let buf = Buffer.alloc(0);
    const t = setTimeout(() => { sock.destroy(); reject(timeoutError(o, 'TCP')); },
      o.timeoutMs ?? 2000);
    sock.on('error', (e) => { clearTimeout(t); reject(e); });
    sock.on('connect', () => {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(msg.length);
      sock.write(Buffer.concat([len, msg]));
    });
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        clearTimeout(t);
        sock.destroy();
        resolve(buf.subarray(2, 2 + buf.readUInt16BE(0)));
      }
    });
  });
}

/** Asks `name`/`type` of the server. */
export async function ask(name: string, type: string, o: AskOptions): Promise<Reply> {
  const msg = encode(name, type);
  let raw = o.tcp ? await overTcp(msg, o) : await overUdp(msg, o);
  let p = dnsPacket.decode(raw) as DecodedPacket & { rcode?: string };
  let retried = false;
  if (!o.tcp && p.flag_tc) {
    raw = await overTcp(msg, o);
    p = dnsPacket.decode(raw) as DecodedPacket & { rcode?: string };
    retried = true;
  }
  const noOpt = (l: Answer[] | undefined) => (l ?? []).filter((a) => a.type !== 'OPT');
  return { rcode: p.rcode ?? 'NOERROR', authoritative: p.flag_aa, retriedOverTcp: retried,
    answers: noOpt(p.answers), authorities: noOpt(p.authorities), additionals: noOpt(p.additionals) };
}

/** One record as dig prints it: `name. TTL IN TYPE data`. */
export function formatRecord(a: Answer): string {
  const r = a as Answer & { ttl?: number; data: unknown };
  const fq = (n: string) => (n.endsWith('.') ? n : `${n}.`);
  let data: string;
  switch (r.type) {
    case 'SRV': {
      const d = r.data as { priority?: number; weight?: number; port: number; target: string };
      data = `${d.priority ?? 0} ${d.weight ?? 0} ${d.port} ${fq(d.target)}`;
      break;
    }
    case 'TXT':
      data = ([] as unknown[]).concat(r.data).map((b) => JSON.stringify(String(b))).join(' ');
      break;
    case 'SOA': {
      const d = r.data as { mname: string; rname: string; serial?: number; refresh?: number;
        retry?: number; expire?: number; minimum?: number };
      data = `${fq(d.mname)} ${fq(d.rname)} ${d.serial} ${d.refresh} ${d.retry} ${d.expire} ${d.minimum}`;
      break;
    }
    case 'CNAME': case 'PTR': case 'NS':
      data = fq(String(r.data));
      break;
    default:
      data = Buffer.isBuffer(r.data) ? `\\# ${r.data.length} ${r.data.toString('hex')}` : String(r.data);
  }
  return `${fq(r.name)}\t${r.ttl ?? 0}\tIN\t${r.type}\t${data}`;
}

/** A record as JSON (`kdp dns lookup -o json`). */
export function recordJson(a: Answer): { name: string; type: string; ttl: number; data: unknown } {
  const r = a as Answer & { ttl?: number; data: unknown };
  const data = r.type === 'TXT' ? ([] as unknown[]).concat(r.data).map(String)
    : Buffer.isBuffer(r.data) ? r.data.toString('hex') : r.data;
  return { name: r.name, type: r.type, ttl: r.ttl ?? 0, data };
}
