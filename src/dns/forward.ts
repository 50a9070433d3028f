// Names outside the cluster go to the host's resolvers, as CoreDNS's `forward . /etc/resolv.conf
// { max_concurrent 1000 }`: the query is sent as received (a fresh ID on the way out, the
// client's on the way back), over UDP, or over TCP when the client asked over TCP. Upstreams
// are tried in order, each for `timeoutMs`.
// More than `maxConcurrent` queries in flight are refused (CoreDNS: REFUSED).

import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect } from 'node:net';
import { randomInt } from 'node:crypto';
import dnsPacket, { type Answer } from 'dns-packet';
import { canonicalIP, ipFamilyOf } from '../api/net.js';

export interface Upstream {
  readonly host: string;
  readonly port: number;
}

/** `nameserver` lines of a resolv.conf (IPs only; an IPv6 zone `%eth0` is dropped). */
export function parseResolvConf(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const m = /^nameserver\s+(\S+)/.exec(line);
    if (!m) continue;
    const ip = canonicalIP(m[1]!.split('%')[0]!);
    if (ip && !out.includes(ip)) out.push(ip);
  }
  return out;
}

export type ForwardResult =
  | { readonly kind: 'reply'; readonly msg: Buffer }
  | { readonly kind: 'busy' }
  | { readonly kind: 'failed'; readonly reason: string };

export interface Forwarder {
  readonly upstreams: readonly Upstream[];
  /** The upstream's reply to a raw query, its ID set back to the query's. */
  forward(query: Buffer, tcp: boolean): Promise<ForwardResult>;
  /** Answers of a question of our own (an ExternalName's target); [] when none or failed. */
  resolve(name: string, type: 'A' | 'AAAA'): Promise<Answer[]>;
  close(): void;
}

export interface ForwarderOptions {
  readonly upstreams: readonly Upstream[];
  readonly timeoutMs?: number;
  readonly maxConcurrent?: number;
}

interface Pending {
  readonly upstream: Upstream;
  readonly done: (msg: Buffer | undefined) => void;
}

export function buildForwarder(o: ForwarderOptions): Forwarder {
  const timeoutMs = o.timeoutMs ?? 2000;
  const maxConcurrent = o.maxConcurrent ?? 1000;
  const pending = new Map<number, Pending>();
  const sockets = new Map<'udp4' | 'udp6', UdpSocket>();
  let inFlight = 0;
  let closed = false;

  function socketFor(family: 'udp4' | 'udp6'): UdpSocket {
    let s = sockets.get(family);
    if (s) return s;
    s = createSocket(family);
    s.on('error', () => undefined);
    s.on('message', (msg, rinfo) => {
      if (msg.length < 12) return;
      const p = pending.get(msg.readUInt16BE(0));
      if (!p || canonicalIP(rinfo.address.replace(/^::ffff:/, '')) !== p.upstream.host
        || rinfo.port !== p.upstream.port) return;
      p.done(msg);
    });
    s.unref();
    sockets.set(family, s);
    return s;
  }

  function freeId(): number {
    for (;;) {
      const id = randomInt(0, 65536);
      if (!pending.has(id)) return id;
    }
  }

  function viaUdp(query: Buffer, u: Upstream): Promise<Buffer | undefined> {
    return new Promise((resolve) => {
      const id = freeId();
      const out = Buffer.from(query);
      out.writeUInt16BE(id, 0);
      const timer = setTimeout(() => finish(undefined), timeoutMs);
      const finish = (msg: Buffer | undefined) => {
        clearTimeout(timer);
        pending.delete(id);
        resolve(msg);
      };
      pending.set(id, { upstream: u, done: finish });
      const s = socketFor(ipFamilyOf(u.host) === 'IPv6' ? 'udp6' : 'udp4');
      s.send(out, u.port, u.host, (err) => { if (err) finish(undefined); });
    });
  }

  function viaTcp(query: Buffer, u: Upstream): Promise<Buffer | undefined> {
    return new Promise((resolve) => {
      const sock = connect({ host: u.host, port: u.port });
      let buf = Buffer.alloc(0);
      const finish = (msg: Buffer | undefined) => {
        clearTimeout(timer);
        sock.destroy();
        resolve(msg);
      };
      const timer = setTimeout(() => finish(undefined), timeoutMs);
      sock.on('error', () => finish(undefined));
      sock.on('close', () => finish(undefined));
      sock.on('connect', () => {
        const len = Buffer.alloc(2);
        len.writeUInt16BE(query.length);
        sock.write(Buffer.concat([len, query]));
      });
      sock.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
        if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          finish(buf.subarray(2, 2 + buf.readUInt16BE(0)));
        }
      });
    });
  }

  async function forward(query: Buffer, tcp: boolean): Promise<ForwardResult> {
    if (closed || o.upstreams.length === 0) {
      return { kind: 'failed', reason: 'no upstream resolvers' };
    }
    if (inFlight >= maxConcurrent) return { kind: 'busy' };
    inFlight++;
    try {
      const id = query.readUInt16BE(0);
      for (const u of o.upstreams) {
        // A truncated UDP reply is passed on as it is: the client retries over TCP.
        let msg = tcp ? await viaTcp(query, u) : await viaUdp(query, u);
        if (msg && msg.length >= 12) {
          msg = Buffer.from(msg);
          msg.writeUInt16BE(id, 0);
          return { kind: 'reply', msg };
        }
      }
      return { kind: 'failed', reason: `no answer from ${o.upstreams.map(hostPort).join(', ')} ` +
        `within ${timeoutMs} ms each` };
    } finally {
      inFlight--;
    }
  }

  return {
    upstreams: o.upstreams,
    forward,
    async resolve(name, type) {
      const q = dnsPacket.encode({ type: 'query', id: 0, flags: dnsPacket.RECURSION_DESIRED,
        questions: [{ name, type, class: 'IN' }] });
      const r = await forward(q, false);
      if (r.kind !== 'reply') return [];
      try {
        return dnsPacket.decode(r.msg).answers ?? [];
      } catch {
        return [];
      }
    },
    close() {
      closed = true;
      for (const p of [...pending.values()]) p.done(undefined);
      for (const s of sockets.values()) s.close();
      sockets.clear();
    },
  };
}

export function hostPort(u: Upstream): string {
  return u.host.includes(':') ? `[${u.host}]:${u.port}` : `${u.host}:${u.port}`;
}
