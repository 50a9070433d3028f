// A small DNS client for the tests: one question over UDP or TCP to a server on loopback,
// decoded with dns-packet (the same library the server uses; dig checks it independently).

import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket, type RecordType } from 'dns-packet';

export interface QueryOptions {
  readonly tcp?: boolean;
  /** Adds an OPT record with this UDP size. */
  readonly edns?: number;
  readonly id?: number;
  readonly timeoutMs?: number;
  readonly host?: string;
}

export function encodeQuery(name: string, type: string, o: QueryOptions = {}): Buffer {
  return dnsPacket.encode({ type: 'query', id: o.id ?? 4242, flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type: type as RecordType, class: 'IN' }],
    additionals: o.edns ? [{ name: '.', type: 'OPT', udpPayloadSize: o.edns, extendedRcode: 0,
      ednsVersion: 0, flags: 0, flag_do: false, options: [] } as unknown as Answer] : [] });
}

export function sendUdp(port: number, msg: Buffer, o: QueryOptions = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    const t = setTimeout(() => { s.close(); reject(new Error('udp: no reply')); }, o.timeoutMs ?? 2000);
    s.on('message', (m) => { clearTimeout(t); s.close(); resolve(m); });
    s.send(msg, port, o.host ?? '127.0.0.1');
  });
}

export function sendTcp(port: number, msgs: Buffer[], o: QueryOptions = {}): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: o.host ?? '127.0.0.1', port });
    const out: Buffer[] = [];
    let buf = Buffer.alloc(0);
    const t = setTimeout(() => { sock.destroy(); reject(new Error(`tcp: ${out.length} replies`)); },
      o.timeoutMs ?? 2000);
    sock.on('error', (e) => { clearTimeout(t); reject(e); });
    sock.on('connect', () => {
      for (const m of msgs) {
        const len = Buffer.alloc(2);
        len.writeUInt16BE(m.length);
        sock.write(Buffer.concat([len, m]));
      }
    });
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        out.push(buf.subarray(2, 2 + buf.readUInt16BE(0)));
        buf = buf.subarray(2 + buf.readUInt16BE(0));
      }
      if (out.length === msgs.length) { clearTimeout(t); sock.destroy(); resolve(out); }
    });
    sock.on('close', () => { clearTimeout(t); resolve(out); });
  });
}

export async function query(port: number, name: string, type: string,
  o: QueryOptions = {}): Promise<DecodedPacket & { rcode: string }> {
  const msg = encodeQuery(name, type, o);
  const reply = o.tcp ? (await sendTcp(port, [msg], o))[0]! : await sendUdp(port, msg, o);
  return dnsPacket.decode(reply) as DecodedPacket & { rcode: string };
}

/** Records as `name ttl IN TYPE data` lines, sorted (dig's +noall +answer style). */
export function lines(records: readonly Answer[] | undefined): string[] {
  return (records ?? []).filter((a) => a.type !== 'OPT').map((a) => {
    const r = a as Answer & { ttl?: number; data: unknown };
    let data: string;
    if (r.type === 'SRV') {
      const d = r.data as { priority: number; weight: number; port: number; target: string };
      data = `${d.priority} ${d.weight} ${d.port} ${d.target}.`;
    } else if (r.type === 'TXT') {
      data = (r.data as Buffer[]).map((b) => JSON.stringify(b.toString())).join(' ');
    } else if (r.type === 'SOA') {
      const d = r.data as { mname: string; rname: string; serial: number; refresh: number;
        retry: number; expire: number; minimum: number };
      data = `${d.mname}. ${d.rname}. ${d.serial} ${d.refresh} ${d.retry} ${d.expire} ${d.minimum}`;
    } else if (['CNAME', 'PTR', 'NS'].includes(r.type)) {
      data = `${String(r.data)}.`;
    } else data = String(r.data);
    return `${r.name}. ${r.ttl} IN ${r.type} ${data}`;
  }).sort();
}
