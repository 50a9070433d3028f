// Port-forward over SPDY driven frame by frame (what kubectl does not show): streams with a bad
// port or stream type are reset, pairs are matched by requestID (or, for clients that send none,
// by consecutive stream ids), and a pair's bytes reach the pod port and come back.

import { request } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackDial } from '../../src/streaming/fakes.js';
import {
  FrameReader, HeaderDecoder, HeaderEncoder, TYPE_RST_STREAM, TYPE_SYN_REPLY, TYPE_SYN_STREAM,
  controlFrame, dataFrame,
} from '../../src/streaming/spdy-frames.js';
import type { SpdyFrame } from '../../src/streaming/spdy-frames.js';
import { echoHandler, tcpServer } from './helpers/port-forward.js';
import { startStreamServer } from './helpers/stream-server.js';
import type { StreamServer } from './helpers/stream-server.js';

let server: StreamServer;
let echo: Awaited<ReturnType<typeof tcpServer>>;
beforeAll(async () => {
  echo = await tcpServer(echoHandler);
  server = await startStreamServer({
    start: () => Promise.reject(new Error('unused')),
    dial: loopbackDial((p) => (p === 80 ? echo.port : 1)),
  });
});
afterAll(async () => {
  await server.close();
  echo.close();
});

/** A minimal SPDY client: opens streams, collects every frame the server sends. */
class Client {
  readonly frames: SpdyFrame[] = [];
  private readonly enc = new HeaderEncoder();
  private readonly reader = new FrameReader();
  private waiters: Array<() => void> = [];

  constructor(readonly socket: Socket) {
    socket.on('data', (c: Buffer) => {
      this.reader.push(c);
      for (let f = this.reader.next(); f; f = this.reader.next()) this.frames.push(f);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  open(id: number, headers: Record<string, string>, fin = false): void {
    const block = this.enc.encode(new Map(Object.entries(headers).map(([k, v]) => [k, [v]])));
    const p = Buffer.alloc(10 + block.length);
    p.writeUInt32BE(id, 0);
    block.copy(p, 10);
    this.socket.write(controlFrame(TYPE_SYN_STREAM, fin ? 1 : 0, p));
  }

  async until(pred: () => boolean, ms = 5000): Promise<void> {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error('timed out waiting for frames');
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  control(type: number, id: number): boolean {
    return this.frames.some((f) => f.kind === 'control' && f.type === type
      && (f.payload.readUInt32BE(0) & 0x7fffffff) === id);
  }

  data(id: number): string {
    return Buffer.concat(this.frames.flatMap((f) => (f.kind === 'data' && f.streamId === id ? f.data : [])))
      .toString();
  }
}

function connect(): Promise<Client> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}/api/v1/namespaces/default/pods/p/portforward`, {
      method: 'POST',
      headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'portforward.k8s.io' },
    });
    req.on('upgrade', (res, socket: Socket, head: Buffer) => {
      expect(res.headers['x-stream-protocol-version']).toBe('portforward.k8s.io');
      const c = new Client(socket);
      if (head.length) socket.emit('data', head);
      resolve(c);
    });
    req.on('response', (res) => reject(new Error(`HTTP ${res.statusCode}`)));
    req.end();
  });
}

describe('SPDY port-forward streams', () => {
  it('resets streams without a valid port or stream type', async () => {
    const c = await connect();
    c.open(1, { streamtype: 'data', requestid: '0' });
    c.open(3, { streamtype: 'data', port: 'http', requestid: '1' });
    c.open(5, { streamtype: 'data', port: '0', requestid: '2' });
    c.open(7, { streamtype: 'stdin', port: '80', requestid: '3' });
    await c.until(() => [1, 3, 5, 7].every((id) => c.control(TYPE_RST_STREAM, id)));
    expect([1, 3, 5, 7].some((id) => c.control(TYPE_SYN_REPLY, id))).toBe(false);
    c.socket.destroy();
  });

  it('pairs by requestID, carries data both ways and ends both streams', async () => {
    const c = await connect();
    c.open(1, { streamtype: 'error', port: '80', requestid: '7' }, true);
    c.open(3, { streamtype: 'data', port: '80', requestid: '7' });
    await c.until(() => c.control(TYPE_SYN_REPLY, 1) && c.control(TYPE_SYN_REPLY, 3));
    c.socket.write(dataFrame(3, Buffer.from('round trip'), true));
    await c.until(() => c.data(3) === 'round trip');
    await c.until(() => c.frames.some((f) => f.kind === 'data' && f.streamId === 1 && (f.flags & 1) === 1));
    expect(c.data(1)).toBe('');
    c.socket.destroy();
  });

  it('pairs consecutive stream ids when the client sends no requestID (old clients)', async () => {
    const c = await connect();
    c.open(1, { streamtype: 'error', port: '81' }, true);
    c.open(3, { streamtype: 'data', port: '81' });
    await c.until(() => c.data(1).length > 0);
    expect(c.data(1)).toBe('error forwarding port 81 to pod p, uid : '
      + 'dial tcp 127.0.0.1:81: connect: connection refused');
    c.socket.destroy();
  });

  it('decodes its own header blocks in order (the reply context stays in step)', async () => {
    const c = await connect();
    const dec = new HeaderDecoder();
    for (let i = 0; i < 3; i++) c.open(1 + 2 * i, { streamtype: 'error', port: '80', requestid: String(i) }, true);
    await c.until(() => [1, 3, 5].every((id) => c.control(TYPE_SYN_REPLY, id)));
    for (const f of c.frames) {
      if (f.kind === 'control' && f.type === TYPE_SYN_REPLY) expect(dec.decode(f.payload.subarray(4)).size).toBe(0);
    }
    c.socket.destroy();
  });
});
