// The server under bad input: malformed and random messages, oversize ones, unknown types and
// classes, EDNS versions it does not speak, a flood from one client. Each is answered (with
// the rcode miekg/dns would give) or dropped, and the server keeps answering afterwards.

import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import dnsPacket from 'dns-packet';
import { buildDnsHandler, staticSource, type DnsHandler } from '../../src/dns/handler.js';
import { buildDnsIndex } from '../../src/dns/records.js';
import { listenDns, type DnsListener } from '../../src/dns/server.js';
import { encodeQuery, lines, query, sendTcp, sendUdp } from './dns-client.js';
import { slice, specCluster, svc } from './fixtures.js';

const Z = 'cluster.local';
const K = `kubernetes.default.svc.${Z}`;
let handler: DnsHandler;
let server: DnsListener;
const logs: string[] = [];

beforeAll(async () => {
  const objs = specCluster();
  // 200 ready endpoints: an A answer of ~12 KB, past any UDP size.
  const many = Array.from({ length: 200 }, (_, i) => ({ ip: `10.9.${i >> 8}.${i & 255}` }));
  const index = buildDnsIndex({ ...objs,
    services: [...objs.services, svc('default', 'big', { clusterIP: 'None', ports: [{ name: 'http', port: 80 }] })],
    endpointSlices: [...objs.endpointSlices, slice('default', 'big', 'big-1', 'IPv4', many, [{ name: 'http', port: 80 }])],
  }, Z, 1);
  handler = buildDnsHandler({ answer: { zone: Z, ttl: 5, pods: 'insecure', reverseZones: true },
    source: staticSource(index), log: (l) => logs.push(l) });
  server = await listenDns(handler, { host: '127.0.0.1', port: 0, tcpIdleMs: 2000 });
});

afterAll(async () => {
  await server.close();
  handler.close();
});

async function stillServes(): Promise<void> {
  const r = await query(server.port, K, 'A');
  expect(lines(r.answers)).toEqual([`${K}. 5 IN A 10.3.0.1`]);
}

/** The reply to raw bytes over UDP, or undefined when none comes within `ms`. */
function rawUdp(msg: Buffer, ms = 300): Promise<Buffer | undefined> {
  return sendUdp(server.port, msg, { timeoutMs: ms }).catch(() => undefined);
}

describe('malformed messages', () => {
  it('shorter than a header: dropped', async () => {
    expect(await rawUdp(Buffer.from([1, 2, 3]))).toBeUndefined();
    await stillServes();
  });

  it('a response (QR set): dropped', async () => {
    const m = encodeQuery(K, 'A');
    m[2]! |= 0x80;
    expect(await rawUdp(m)).toBeUndefined();
  });

  it('a truncated question: FORMERR with the query ID', async () => {
    const m = encodeQuery(K, 'A', { id: 777 }).subarray(0, 20);
    const r = dnsPacket.decode((await rawUdp(m))!) as unknown as { rcode: string; id: number };
    expect(r.rcode).toBe('FORMERR');
    expect(r.id).toBe(777);
  });

  it('two questions, or none: FORMERR', async () => {
    const two = dnsPacket.encode({ type: 'query', id: 5, questions: [{ name: K, type: 'A' }, { name: K, type: 'AAAA' }] });
    const none = dnsPacket.encode({ type: 'query', id: 6, questions: [] });
    for (const m of [two, none]) {
      expect((dnsPacket.decode((await rawUdp(m))!) as unknown as { rcode: string }).rcode).toBe('FORMERR');
    }
  });

  it('an opcode other than QUERY (NOTIFY, UPDATE): NOTIMP', async () => {
    const m = encodeQuery(K, 'A');
    m[2] = (m[2]! & 0x87) | (5 << 3); // UPDATE
    expect((dnsPacket.decode((await rawUdp(m))!) as unknown as { rcode: string }).rcode).toBe('NOTIMP');
  });

  it('a compression pointer loop in the name: FORMERR', async () => {
    const m = Buffer.concat([encodeQuery('a', 'A').subarray(0, 12), Buffer.from([0xc0, 12, 0, 1, 0, 1])]);
    expect((dnsPacket.decode((await rawUdp(m))!) as unknown as { rcode: string }).rcode).toBe('FORMERR');
  });

  it('5,000 random messages (seeded) over UDP and TCP: no crash, still serving', async () => {
    let seed = 42;
    const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const base = encodeQuery(K, 'SRV', { edns: 4096 });
    const s = createSocket('udp4');
    const frames: Buffer[] = [];
    for (let i = 0; i < 5000; i++) {
      const m = Buffer.from(i % 2 ? base : Buffer.alloc(Math.floor(rand() * 600)));
      for (let j = 0; j < m.length; j++) if (i % 2 === 0 || rand() < 0.1) m[j] = Math.floor(rand() * 256);
      if (i % 10 === 0) frames.push(m.subarray(0, Math.min(m.length, 300)));
      s.send(m, server.port, '127.0.0.1');
    }
    await new Promise((r) => setTimeout(r, 300));
    s.close();
    await sendTcp(server.port, frames, { timeoutMs: 1000 }).catch(() => []);
    await stillServes();
  });
});

describe('sizes and EDNS0', () => {
  it('a UDP answer larger than 512 bytes (no EDNS) is truncated with TC; TCP gets it whole', async () => {
    const name = `big.default.svc.${Z}`;
    const udp = await query(server.port, name, 'A');
    expect(udp.flag_tc).toBe(true);
    expect(encodeQuery(name, 'A').length).toBeLessThan(512);
    const tcp = await query(server.port, name, 'A', { tcp: true });
    expect(tcp.flag_tc).toBe(false);
    expect(tcp.answers).toHaveLength(200);
  });

  it('EDNS0: the client\'s UDP size raises the limit; the reply carries an OPT (1232)', async () => {
    const r = await query(server.port, `big.default.svc.${Z}`, 'A', { edns: 4096 });
    expect(r.flag_tc).toBe(true);
    const size = dnsPacket.encode(r).length;
    expect(size).toBeGreaterThan(1232);
    expect(size).toBeLessThanOrEqual(4096);
    const opt = r.additionals?.find((a) => a.type === 'OPT') as unknown as { udpPayloadSize: number };
    expect(opt.udpPayloadSize).toBe(1232);
  });

  it('dig follows TC over TCP and gets every record', async () => {
    const { execFile } = await import('node:child_process');
    const out = await new Promise<string>((resolve, reject) => execFile('dig',
      ['@127.0.0.1', '-p', String(server.port), '+noedns', '+short', `big.default.svc.${Z}`, 'A'],
      (err, stdout) => (err ? reject(err) : resolve(stdout))));
    expect(out.trim().split('\n')).toHaveLength(200);
  });

  it('EDNS version 1: BADVERS (extended rcode 16) with an OPT', async () => {
    const m = encodeQuery(K, 'A', { edns: 1232 });
    m[m.length - 5] = 1; // the OPT's version byte (its TTL's second byte)
    const r = dnsPacket.decode((await rawUdp(m))!);
    const opt = r.additionals?.find((a) => a.type === 'OPT') as unknown as { extendedRcode: number };
    expect(opt.extendedRcode).toBe(1);
    expect(r.answers).toHaveLength(0);
  });

  it('an oversize TCP frame (64 KB of junk) is refused or dropped, and the server goes on', async () => {
    const junk = Buffer.alloc(65535, 0x41);
    junk.writeUInt16BE(1234, 0);
    junk.writeUInt16BE(0x0100, 2);
    await sendTcp(server.port, [junk], { timeoutMs: 1000 }).catch(() => []);
    await stillServes();
  });

  it('pipelined TCP queries on one connection are all answered', async () => {
    const msgs = Array.from({ length: 50 }, (_, i) => encodeQuery(K, 'A', { id: i + 1 }));
    const replies = await sendTcp(server.port, msgs, { timeoutMs: 2000 });
    expect(replies.map((r) => r.readUInt16BE(0)).sort((a, b) => a - b))
      .toEqual(msgs.map((_, i) => i + 1));
  });
});

describe('types and classes', () => {
  it('an unknown type on an existing name is NODATA, on a missing one NXDOMAIN', async () => {
    expect((await query(server.port, K, 'UNKNOWN_65280')).rcode).toBe('NOERROR');
    expect((await query(server.port, `nope.default.svc.${Z}`, 'UNKNOWN_65280')).rcode).toBe('NXDOMAIN');
  });

  it('class CH is refused', async () => {
    const m = dnsPacket.encode({ type: 'query', id: 9, questions: [{ name: 'version.bind', type: 'TXT', class: 'CH' }] });
    expect((dnsPacket.decode((await rawUdp(m))!) as unknown as { rcode: string }).rcode).toBe('REFUSED');
  });
});

describe('floods and idle connections', () => {
  it('20,000 queries from one socket as fast as it can send: replies or drops, then serves', async () => {
    const s = createSocket('udp4');
    let got = 0;
    s.on('message', () => { got++; });
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
    const m = encodeQuery(K, 'A');
    for (let i = 0; i < 20000; i++) {
      m.writeUInt16BE(i & 0xffff, 0);
      s.send(Buffer.from(m), server.port, '127.0.0.1');
      if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => setTimeout(r, 500));
    s.close();
    expect(got).toBeGreaterThan(0);
    expect(got).toBeLessThanOrEqual(20000);
    await stillServes();
  });

  it('300 TCP connections that never send: bounded (256), then closed when idle', async () => {
    const socks = Array.from({ length: 300 }, () => connect({ host: '127.0.0.1', port: server.port }));
    for (const s of socks) s.on('error', () => undefined);
    await new Promise((r) => setTimeout(r, 200));
    await stillServes();
    const closed = await Promise.all(socks.map((s) => new Promise<boolean>((r) => {
      if (s.destroyed) r(true);
      s.on('close', () => r(true));
      setTimeout(() => r(false), 4000);
    })));
    expect(closed.every(Boolean)).toBe(true);
  });
});

describe('no upstream', () => {
  it('names outside the cluster are REFUSED, with a log line saying why', async () => {
    const r = await query(server.port, 'example.org', 'A');
    expect(r.rcode).toBe('REFUSED');
    // One line per 30 s (the fuzzing above may have been first), naming the cause.
    expect(logs.some((l) => /forward: no upstream resolvers \(no nameserver in the host's resolv.conf\)/
      .test(l))).toBe(true);
  });
});

describe('before the first sync', () => {
  it('names the cluster does not know are SERVFAIL, not NXDOMAIN', async () => {
    const index = { ...buildDnsIndex(specCluster(), Z, 1), synced: false };
    const h = buildDnsHandler({ answer: { zone: Z, ttl: 5, pods: 'insecure', reverseZones: true },
      source: staticSource(index) });
    const reply = await h.handle(encodeQuery(`nope.default.svc.${Z}`, 'A'), 'udp');
    expect((dnsPacket.decode(reply!) as unknown as { rcode: string }).rcode).toBe('SERVFAIL');
    h.close();
  });
});
