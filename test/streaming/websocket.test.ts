// The hand-written RFC 6455 server end (src/streaming/websocket.ts) against the `ws` client:
// unmasking at every alignment, fragmented and large messages, ping/pong, the close handshake.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { OP_BINARY, OP_TEXT, WsConnection, acceptWebSocketHandshake, unmaskInPlace } from '../../src/streaming/websocket.js';

const server = createServer();
let url = '';
const closes: number[] = [];

beforeAll(async () => {
  // Echo server: every message comes back with the same type. Path /spdy answers the protocol
  // `SPDY/3.1+echo.test` (not an RFC token), any other path `echo-test`.
  server.on('upgrade', (req, socket: Duplex, head: Buffer) => {
    const protocol = req.url === '/spdy' ? 'SPDY/3.1+echo.test' : 'echo-test';
    if (!acceptWebSocketHandshake(req, socket, protocol)) return;
    const conn: WsConnection = new WsConnection(socket, head, {
      onMessage: (data, binary) => {
        if (!binary && data.toString() === 'close please') conn.close(1000);
        else conn.send(binary ? OP_BINARY : OP_TEXT, [data]);
      },
      onClose: (code) => closes.push(code),
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => { server.close(); });

function client(): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['echo-test']);
    ws.on('open', () => resolve(ws));
    ws.on('error', reject);
  });
}

function next(ws: WebSocket): Promise<{ data: Buffer; binary: boolean }> {
  return new Promise((resolve) => ws.once('message', (data: Buffer, binary: boolean) => resolve({ data, binary })));
}

describe('unmaskInPlace', () => {
  it('matches a byte-wise XOR for every offset, length and mask phase', () => {
    const mask = Buffer.from([0x12, 0x34, 0x56, 0x78]);
    const base = Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 37) & 0xff));
    for (let off = 0; off < 5; off++) {
      for (let len = 0; len < 20; len++) {
        for (let phase = 0; phase < 4; phase++) {
          const pool = Buffer.from(base);
          const view = pool.subarray(off, off + len);
          const want = Buffer.from(view.map((b, i) => b ^ mask[(phase + i) & 3]!));
          unmaskInPlace(view, mask, phase);
          expect(view).toEqual(want);
        }
      }
    }
  });
});

describe('WsConnection', () => {
  it('answers the handshake with the chosen protocol even when it is not an RFC token', async () => {
    const header = await new Promise<unknown>((resolve) => {
      const c = new WebSocket(`${url}spdy`);
      // ws (the client) then refuses a protocol it did not offer; the answer is what counts.
      c.on('upgrade', (res) => resolve(res.headers['sec-websocket-protocol']));
      c.on('error', () => {});
    });
    expect(header).toBe('SPDY/3.1+echo.test');
  });

  it('echoes binary and text, small, 64 KiB and 3 MiB, and fragmented messages', async () => {
    const ws = await client();
    for (const size of [1, 125, 126, 65535, 65536, 3 * 1024 * 1024]) {
      const data = Buffer.from(Array.from({ length: size }, (_, i) => i & 0xff));
      const got = next(ws);
      ws.send(data);
      expect((await got).data.equals(data)).toBe(true);
    }
    const text = next(ws);
    ws.send('héllo');
    expect(await text).toEqual({ data: Buffer.from('héllo'), binary: false });
    const frag = next(ws);
    ws.send(Buffer.from('abc'), { fin: false });
    ws.send(Buffer.from('def'), { fin: true });
    expect((await frag).data.toString()).toBe('abcdef');
    const pong = new Promise<Buffer>((r) => ws.once('pong', r));
    ws.ping(Buffer.from('p1'));
    expect((await pong).toString()).toBe('p1');
    ws.terminate();
  });

  it('closes with 1000 in both directions', async () => {
    const ws = await client();
    const closed = new Promise<number>((r) => ws.once('close', r));
    ws.send('close please');
    expect(await closed).toBe(1000);
    expect(closes).toContain(1000);
  });
});
