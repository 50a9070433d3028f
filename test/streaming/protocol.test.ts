// Protocol details without kubectl: negotiation refusals as upstream words them, the older
// WebSocket channel variants (v4, base64), plain WebSocket port-forward, SPDY framing.

import { request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { kdpError } from '../../src/errors.js';
import { childProcessStream, loopbackDial } from '../../src/streaming/fakes.js';
import { FrameReader, HeaderDecoder, HeaderEncoder, controlFrame, dataFrame } from '../../src/streaming/spdy-frames.js';
import { echoHandler, tcpServer } from './helpers/port-forward.js';
import { startStreamServer } from './helpers/stream-server.js';
import type { StreamServer } from './helpers/stream-server.js';

let server: StreamServer;
let echo: Awaited<ReturnType<typeof tcpServer>>;
beforeAll(async () => {
  echo = await tcpServer(echoHandler);
  server = await startStreamServer({
    start: (_kind, argv, opts) => (argv[0] === 'missing-container'
      ? Promise.reject(kdpError('KDP_NOT_FOUND', 'container not found ("c")'))
      : childProcessStream(argv, opts)),
    dial: loopbackDial((p) => (p === 80 ? echo.port : 1)),
  });
});
afterAll(async () => {
  await server.close();
  echo.close();
});

/** Sends an upgrade request and returns the non-101 answer (status, headers, body). */
function refused(path: string, headers: Record<string, string>): Promise<{
  status: number; headers: IncomingMessage['headers']; body: string;
}> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method: 'POST', headers });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('upgrade', () => reject(new Error('unexpected upgrade')));
    req.on('error', reject);
    req.end();
  });
}

const EXEC = '/api/v1/namespaces/default/pods/p/exec?command=echo&command=hi&stdout=true';
const SPDY = { Connection: 'Upgrade', Upgrade: 'SPDY/3.1' };

describe('SPDY negotiation', () => {
  it('without X-Stream-Protocol-Version is 400 as httpstream.Handshake says', async () => {
    const r = await refused(EXEC, SPDY);
    expect(r.status).toBe(400);
    expect(r.body).toMatch(/^unable to upgrade: header X-Stream-Protocol-Version does not exist in request with \d+ headers\n$/);
  });

  it('with no common protocol is 403 listing the accepted versions', async () => {
    const r = await refused(EXEC, { ...SPDY, 'X-Stream-Protocol-Version': 'v9.channel.k8s.io' });
    expect(r.status).toBe(403);
    expect(r.headers['x-accepted-stream-protocol-versions']).toBe(
      'v4.channel.k8s.io, v3.channel.k8s.io, v2.channel.k8s.io, channel.k8s.io');
    expect(r.body).toContain('unable to negotiate protocol: client supports [v9.channel.k8s.io]');
  });

  it('a process that cannot start is refused before the upgrade with its status and text', async () => {
    const r = await refused('/api/v1/namespaces/default/pods/p/exec?command=missing-container&stdout=true',
      { ...SPDY, 'X-Stream-Protocol-Version': 'v4.channel.k8s.io' });
    expect(r).toMatchObject({ status: 404, body: 'container not found ("c")\n' });
  });

  it('a pod the caller refuses gets refuseUpgrade\'s Status body', async () => {
    const r = await refused('/api/v1/namespaces/default/pods/other/exec?command=x&stdout=true',
      { ...SPDY, 'X-Stream-Protocol-Version': 'v4.channel.k8s.io' });
    expect(r.status).toBe(404);
    expect(r.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.body)).toMatchObject({ kind: 'Status', reason: 'NotFound' });
  });
});

interface WsRun { protocol: string; messages: Array<{ data: Buffer; binary: boolean }>; closeCode: number }

function wsRun(path: string, protocols: string[], send: (ws: WebSocket) => void = () => {}): Promise<WsRun> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}${path}`, protocols);
    const messages: WsRun['messages'] = [];
    ws.on('open', () => send(ws));
    ws.on('message', (data: Buffer, binary: boolean) => messages.push({ data, binary }));
    ws.on('close', (code) => resolve({ protocol: ws.protocol, messages, closeCode: code }));
    ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.on('error', reject);
  });
}

describe('WebSocket remote command', () => {
  it('v4.channel.k8s.io: ready message, output, JSON status on channel 3, normal close', async () => {
    const r = await wsRun('/api/v1/namespaces/default/pods/p/exec?command=sh&command=-c&command=echo%20x%3B%20exit%207'
      + '&stdout=true&stderr=true', ['v4.channel.k8s.io']);
    expect(r.protocol).toBe('v4.channel.k8s.io');
    expect(r.messages[0]).toEqual({ data: Buffer.from([1]), binary: true });
    expect(r.messages[1]!.data).toEqual(Buffer.from('\x01x\n'));
    const status = r.messages.at(-1)!.data;
    expect(status[0]).toBe(3);
    expect(JSON.parse(status.subarray(1).toString())).toEqual({
      metadata: {}, status: 'Failure', reason: 'NonZeroExitCode',
      message: 'command terminated with non-zero exit code: error executing command [sh -c echo x; exit 7], exit code 7',
      details: { causes: [{ reason: 'ExitCode', message: '7' }] },
    });
    expect(r.closeCode).toBe(1000);
  });

  it('base64.channel.k8s.io: text messages, ASCII channel digits, plain-text error', async () => {
    const r = await wsRun('/api/v1/namespaces/default/pods/p/exec?command=sh&command=-c&command=echo%20y%3B%20exit%202'
      + '&stdout=true', ['base64.channel.k8s.io']);
    expect(r.protocol).toBe('base64.channel.k8s.io');
    expect(r.messages.every((m) => !m.binary)).toBe(true);
    expect(r.messages[0]!.data.toString()).toBe('1');
    expect(r.messages[1]!.data.toString()).toBe(`1${Buffer.from('y\n').toString('base64')}`);
    const last = r.messages.at(-1)!.data.toString();
    expect(last[0]).toBe('3');
    expect(Buffer.from(last.slice(1), 'base64').toString()).toBe(
      'command terminated with non-zero exit code: error executing command [sh -c echo y; exit 2], exit code 2');
  });

  it('v5.channel.k8s.io: the close signal [255, 0] ends the process\'s stdin', async () => {
    const r = await wsRun('/api/v1/namespaces/default/pods/p/exec?command=wc&command=-c&stdin=true&stdout=true',
      ['v5.channel.k8s.io'], (ws) => {
        ws.send(Buffer.from('\x00abcdef'));
        ws.send(Buffer.from([255, 0]));
      });
    const out = r.messages.filter((m) => m.data[0] === 1).map((m) => m.data.subarray(1).toString()).join('');
    expect(out.trim()).toBe('6');
    expect(JSON.parse(r.messages.at(-1)!.data.subarray(1).toString())).toEqual({ metadata: {}, status: 'Success' });
  });

  it('no protocol in common is refused (403), so clients fall back to SPDY', async () => {
    await expect(wsRun(EXEC, ['v9.channel.k8s.io'])).rejects.toThrow('HTTP 403');
  });
});

describe('WebSocket port-forward (client-node style)', () => {
  it('opens each channel with the port (uint16 LE) and carries the bytes', async () => {
    const r = await wsRun('/api/v1/namespaces/default/pods/p/portforward?ports=80', ['v4.channel.k8s.io'], (ws) => {
      ws.send(Buffer.from('\x00ping'));
      setTimeout(() => ws.close(), 300);
    });
    expect(r.messages.slice(0, 2).map((m) => [...m.data])).toEqual([[0, 80, 0], [1, 80, 0]]);
    expect(Buffer.concat(r.messages.slice(2).filter((m) => m.data[0] === 0).map((m) => m.data.subarray(1)))
      .toString()).toBe('ping');
  });

  it('a refused port is upstream\'s text on the error channel', async () => {
    const r = await wsRun('/api/v1/namespaces/default/pods/p/portforward?ports=81', ['v4.channel.k8s.io']);
    const err = r.messages.filter((m) => m.data[0] === 1).map((m) => m.data.subarray(1));
    expect(err[1]!.toString()).toBe(
      'error forwarding port 81 to pod p, uid : dial tcp 127.0.0.1:81: connect: connection refused');
  });

  it('without ports is 400', async () => {
    await expect(wsRun('/api/v1/namespaces/default/pods/p/portforward', ['v4.channel.k8s.io']))
      .rejects.toThrow('HTTP 400');
  });
});

describe('SPDY framing', () => {
  it('header blocks share one zlib context per direction across frames', () => {
    const enc = new HeaderEncoder();
    const dec = new HeaderDecoder();
    for (let i = 0; i < 5; i++) {
      const h = new Map([['streamtype', ['data']], ['port', [String(8000 + i)]], ['requestid', [String(i)]]]);
      expect(dec.decode(enc.encode(h))).toEqual(h);
    }
  });

  it('frames split into single bytes reassemble; data pieces are passed through', () => {
    const bytes = Buffer.concat([controlFrame(6, 0, Buffer.from([0, 0, 0, 1])),
      dataFrame(3, Buffer.from('hello'), true)]);
    const reader = new FrameReader();
    const frames = [];
    for (const b of bytes) {
      reader.push(Buffer.from([b]));
      for (let f = reader.next(); f; f = reader.next()) frames.push(f);
    }
    expect(frames[0]).toMatchObject({ kind: 'control', type: 6, payload: Buffer.from([0, 0, 0, 1]) });
    expect(frames[1]).toMatchObject({ kind: 'data', streamId: 3, flags: 1 });
    expect(Buffer.concat((frames[1] as { data: Buffer[] }).data).toString()).toBe('hello');
  });
});
