// The DNS server's listeners: UDP and TCP (RFC 7766 framing, pipelined queries) on one port,
// both handed to the DNS handler. Bounded against floods: UDP is answered as it arrives (the
// kernel's receive queue drops the excess), TCP takes at most `maxTcpConnections` connections
// of at most `maxTcpPipelined` queries in flight each, idle ones closed after `tcpIdleMs`.

import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import type { DnsHandler } from './handler.js';
import { MAX_TCP_MESSAGE } from './message.js';

export interface DnsListenOptions {
  /** Address to bind; `::` serves both families where IPv6 exists. Default 127.0.0.1. */
  readonly host?: string;
  /** Default 53; 0 picks a free port (the same for UDP and TCP). */
  readonly port?: number;
  readonly maxTcpConnections?: number;
  readonly maxTcpPipelined?: number;
  readonly tcpIdleMs?: number;
}

export interface DnsListener {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

const isV6 = (addr: string) => addr.includes(':') && !addr.startsWith('::ffff:');

function bindUdp(host: string, port: number): Promise<UdpSocket> {
  return new Promise((resolve, reject) => {
    const s = createSocket({ type: host.includes(':') ? 'udp6' : 'udp4', ipv6Only: false });
    s.once('error', reject);
    s.bind(port, host, () => {
      s.removeListener('error', reject);
      resolve(s);
    });
  });
}

function listenTcp(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, ipv6Only: false }, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
}

export async function listenDns(handler: DnsHandler,
  o: DnsListenOptions = {}): Promise<DnsListener> {
  const host = o.host ?? '127.0.0.1';
  const maxPipelined = o.maxTcpPipelined ?? 16;
  const idleMs = o.tcpIdleMs ?? 10_000;
  // Port 0: the UDP port the kernel picked may be taken for TCP; then another pair is tried.
  let udp = await bindUdp(host, o.port ?? 53);
  const tcp = createServer((sock) => serveTcp(sock, handler, maxPipelined, idleMs, sockets));
  tcp.maxConnections = o.maxTcpConnections ?? 256;
  const sockets = new Set<Socket>();
  for (let attempt = 1; ; attempt++) {
    try {
      await listenTcp(tcp, host, udp.address().port);
      break;
    } catch (e) {
      udp.close();
      if (o.port || (e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 20) throw e;
      udp = await bindUdp(host, 0);
    }
  }
  const port = udp.address().port;
  udp.on('error', () => undefined);
  udp.on('message', (msg, rinfo) => {
    const v6 = isV6(rinfo.address);
    const hit = handler.cached(msg, 'udp', v6);
    if (hit) { udp.send(hit, rinfo.port, rinfo.address); return; }
    void handler.handle(msg, 'udp', v6).then((reply) => {
      if (reply) udp.send(reply, rinfo.port, rinfo.address);
    });
  });
  return {
    host, port,
    close: () => new Promise<void>((resolve) => {
      udp.close();
      for (const s of sockets) s.destroy();
      tcp.close(() => resolve());
    }),
  };
}

function serveTcp(sock: Socket, handler: DnsHandler, maxPipelined: number, idleMs: number,
  sockets: Set<Socket>): void {
  sockets.add(sock);
  sock.setNoDelay(true);
  sock.setTimeout(idleMs, () => sock.destroy());
  sock.on('error', () => undefined);
  sock.on('close', () => sockets.delete(sock));
  const v6 = isV6(sock.remoteAddress ?? '');
  let buf: Buffer = Buffer.alloc(0);
  let inFlight = 0;
  const drain = () => {
    while (buf.length >= 2 && inFlight < maxPipelined) {
      const len = buf.readUInt16BE(0);
      if (buf.length < 2 + len) break;
      const msg = buf.subarray(2, 2 + len);
      buf = buf.subarray(2 + len);
      inFlight++;
      void handler.handle(Buffer.from(msg), 'tcp', v6).then((reply) => {
        inFlight--;
        if (sock.destroyed) return;
        if (reply && reply.length <= MAX_TCP_MESSAGE) {
          const len2 = Buffer.alloc(2);
          len2.writeUInt16BE(reply.length);
          sock.write(Buffer.concat([len2, reply]));
        } else if (!reply) {
          // RFC 7766 §6.2.4: a message we will not answer ends the connection.
          sock.destroy();
          return;
        }
        if (sock.isPaused()) sock.resume();
        drain();
      });
    }
    if (inFlight >= maxPipelined) sock.pause();
  };
  sock.on('data', (d) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    // A frame is at most 2 + 65535 bytes; more than a frame's worth buffered unread means the
    // peer sends faster than we answer: pausing (above) bounds it.
    drain();
  });
}
