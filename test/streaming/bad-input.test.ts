// Hostile or broken clients: after a malformed SPDY frame, an oversized header block or an
// unmasked WebSocket frame the connection is dropped and the process started for it is ended.

import { request } from 'node:http';
import type { Socket } from 'node:net';
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamProcess } from '../../src/kubelet/streams.js';
import { childProcessStream } from '../../src/streaming/fakes.js';
import { HeaderDecoder, TYPE_SYN_STREAM, controlFrame } from '../../src/streaming/spdy-frames.js';
import { SPDY3_HEADER_DICTIONARY } from '../../src/streaming/spdy-dictionary.js';
import { startStreamServer } from './helpers/stream-server.js';
import type { StreamServer } from './helpers/stream-server.js';

let server: StreamServer;
const procs: StreamProcess[] = [];
beforeAll(async () => {
  server = await startStreamServer({
    start: async (_kind, argv, opts) => {
      const p = await childProcessStream(argv, opts);
      procs.push(p);
      return p;
    },
  });
});
afterAll(async () => { await server.close(); });

const SLEEP = '/api/v1/namespaces/default/pods/p/exec?command=sleep&command=30&stdout=true';

function upgrade(headers: Record<string, string>): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${SLEEP}`, { method: headers.Upgrade === 'websocket' ? 'GET' : 'POST', headers });
    req.on('upgrade', (_res, socket: Socket) => resolve(socket));
    req.on('response', (res) => reject(new Error(`HTTP ${res.statusCode}`)));
    req.end();
  });
}

async function closedAndEnded(socket: Socket, send: Buffer): Promise<void> {
  const before = procs.length - 1;
  const proc = procs[before]!;
  const closed = new Promise((r) => socket.once('close', () => r('closed')));
  socket.on('error', () => {});
  socket.resume();
  socket.write(send);
  const timeout = (what: string) => new Promise((r) => setTimeout(() => r(what), 5000));
  expect(await Promise.race([closed, timeout('open')])).toBe('closed');
  expect(await Promise.race([proc.exited, timeout('running')])).toBe(137);
}

const SPDY = { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'v4.channel.k8s.io' };

function synStream(id: number, block: Buffer): Buffer {
  const p = Buffer.alloc(10 + block.length);
  p.writeUInt32BE(id, 0);
  block.copy(p, 10);
  return controlFrame(TYPE_SYN_STREAM, 0, p);
}

describe('a broken client', () => {
  it('SPDY: a header block that does not decompress drops the connection', async () => {
    const socket = await upgrade(SPDY);
    await closedAndEnded(socket, synStream(1, Buffer.from('definitely not zlib')));
  });

  it('SPDY: a header block inflating past 256 KiB drops the connection', async () => {
    const socket = await upgrade(SPDY);
    const raw = Buffer.alloc(4 + 8 + 1 + 1_000_000);
    raw.writeUInt32BE(1, 0);
    raw.writeUInt32BE(1, 4);
    raw.write('x', 8);
    raw.writeUInt32BE(1_000_000, 9);
    const bomb = deflateSync(raw, { dictionary: SPDY3_HEADER_DICTIONARY, flush: 2 });
    expect(bomb.length).toBeLessThan(5000);
    expect(() => new HeaderDecoder().decode(bomb)).toThrow('spdy: header block too large');
    await closedAndEnded(socket, synStream(1, bomb));
  });


  it('WebSocket: an unmasked client frame is a protocol error (1002) and drops the connection', async () => {
    const socket = await upgrade({ Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': Buffer.alloc(16, 1).toString('base64'), 'Sec-WebSocket-Protocol': 'v5.channel.k8s.io' });
    await closedAndEnded(socket, Buffer.from([0x82, 0x02, 0x00, 0x41]));
  });
});
