// servePortForward: the kubelet's port-forward server (cri/streaming/portforward) over
//  - SPDY/3.1 (`portforward.k8s.io`): per forwarded connection the client opens an error and a
//    data stream carrying the same `requestID` and `port` headers; a dial failure is written
//    as text on the error stream;
//  - SPDY/3.1 tunnelled in a WebSocket (`SPDY/3.1+portforward.k8s.io`, kubectl ≥ 1.31): the
//    same session, each WebSocket binary message a piece of the SPDY byte stream;
//  - the WebSocket channel protocol (`v4.channel.k8s.io`, its base64 form, or none) with the
//    ports in the query: channels 2i (data) and 2i+1 (error) per port, each opened by the port
//    as a little-endian uint16.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { acceptSpdy, isWebSocketRequest, negotiateSpdy, refuseText } from './http-upgrade.js';
import { headerValue } from './spdy-frames.js';
import { SpdySession } from './spdy-session.js';
import type { SpdyStream } from './spdy-session.js';
import { STREAM_CREATION_TIMEOUT_MS } from './command-streams.js';
import {
  WsByteStream, WsChannels, acceptWebSocketHandshake, selectWebSocketProtocol,
} from './ws-channels.js';
import type { ChannelMode } from './ws-channels.js';

export const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';
export const TUNNELING_PREFIX = 'SPDY/3.1+';
const WS_PORT_FORWARD_PROTOCOLS = ['v4.channel.k8s.io', 'v4.base64.channel.k8s.io', ''] as const;

/** Whose port is forwarded, for the error text (upstream: the pod sandbox and its uid). */
export interface PortForwardTarget {
  readonly pod: string;
  readonly uid?: string;
}

export type Dial = (port: number) => Promise<Duplex>;

/** The kubelet path /portForward/{ns}/{pod}[/{uid}] or the API path …/pods/{pod}/portforward. */
function targetFromUrl(req: IncomingMessage): PortForwardTarget {
  const url = new URL(req.url ?? '/', 'http://kubelet.invalid');
  const path = url.pathname.split('/').filter(Boolean);
  if (path[0] === 'portForward') return { pod: path[2] ?? '', uid: path[3] ?? '' };
  const i = path.indexOf('pods');
  return { pod: i >= 0 ? path[i + 1] ?? '' : '', uid: '' };
}

function errorText(port: number, target: PortForwardTarget, err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return `error forwarding port ${port} to pod ${target.pod}, uid ${target.uid ?? ''}: ${msg}`;
}

/** After one direction of a forwarded connection ends, how long the other may go on. */
export const HALF_CLOSE_GRACE_MS = 1_000;

/**
 * Joins a client stream and a dialed connection both ways, as containerd's PortForward does:
 * each side's end is passed on (half-close), and once either direction is done the other gets
 * HALF_CLOSE_GRACE_MS before both are torn down. Resolves when torn down.
 */
export function join(client: Duplex, conn: Duplex): Promise<void> {
  return new Promise((resolve) => {
    let done = 0;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      conn.destroy();
      resolve();
    };
    const oneWay = (): void => {
      if (++done === 2) finish();
      else timer = setTimeout(finish, HALF_CLOSE_GRACE_MS);
    };
    conn.on('error', finish);
    conn.on('close', finish);
    client.on('error', finish);
    client.on('close', finish);
    client.pipe(conn);
    conn.pipe(client);
    client.once('end', oneWay);
    conn.once('end', oneWay);
  });
}

export async function servePortForward(
  req: IncomingMessage, socket: Duplex, head: Buffer, ports: readonly number[] | undefined,
  dial: Dial, target: PortForwardTarget = targetFromUrl(req),
): Promise<void> {
  socket.on('error', () => {});
  if (!isWebSocketRequest(req)) {
    const protocol = negotiateSpdy(req, socket, [PORT_FORWARD_PROTOCOL]);
    if (protocol === undefined) return;
    acceptSpdy(socket, protocol);
    return serveSpdy(socket, head, dial, target);
  }
  const tunnel = `${TUNNELING_PREFIX}${PORT_FORWARD_PROTOCOL}`;
  if (selectWebSocketProtocol(req, [tunnel]) === tunnel) {
    if (!acceptWebSocketHandshake(req, socket, tunnel)) return;
    const transport = new WsByteStream(socket, head);
    transport.on('error', () => {});
    return serveSpdy(transport, Buffer.alloc(0), dial, target);
  }
  const protocol = selectWebSocketProtocol(req, WS_PORT_FORWARD_PROTOCOLS);
  if (protocol === undefined) {
    refuseText(socket, 403, 'unable to upgrade: requested protocol(s) are not supported');
    return;
  }
  if (!ports || ports.length === 0) {
    refuseText(socket, 400, 'query parameter "port" is required');
    return;
  }
  if (!acceptWebSocketHandshake(req, socket, protocol)) return;
  return serveWsChannels(socket, head, protocol, ports, dial, target);
}

interface StreamPair {
  data?: SpdyStream;
  error?: SpdyStream;
  timer?: NodeJS.Timeout;
}

/** Validation of a new port-forward stream (httpStreamReceived); an error resets it. */
function checkStream(stream: SpdyStream): string | undefined {
  const port = headerValue(stream.headers, 'port');
  if (port === '') return '"port" header is required';
  if (!/^\d+$/.test(port) || Number(port) > 65535) return `unable to parse "${port}" as a port`;
  if (Number(port) < 1) return `port "${port}" must be > 0`;
  const type = headerValue(stream.headers, 'streamtype');
  if (type === '') return '"streamType" header is required';
  if (type !== 'error' && type !== 'data') return `invalid stream type "${type}"`;
  return undefined;
}

function serveSpdy(
  transport: Duplex, head: Buffer, dial: Dial, target: PortForwardTarget,
): Promise<void> {
  const pairs = new Map<string, StreamPair>();
  const conns = new Set<Duplex>();
  return new Promise((resolve) => {
    const session = new SpdySession(transport, head, {
      onStream(stream) {
        if (checkStream(stream) !== undefined) {
          stream.resetStream();
          return;
        }
        stream.reply();
        stream.on('error', () => {});
        const type = headerValue(stream.headers, 'streamtype') as 'data' | 'error';
        // Old clients send no requestID: pair consecutive stream ids (upstream's best effort).
        const requestId = headerValue(stream.headers, 'requestid')
          || String(type === 'error' ? stream.id : stream.id - 2);
        let pair = pairs.get(requestId);
        if (!pair) {
          const created: StreamPair = {};
          created.timer = setTimeout(() => {
            created.error?.write(
              `(conn=${requestId}, request=${requestId}) timed out waiting for streams`);
            pairs.delete(requestId);
          }, STREAM_CREATION_TIMEOUT_MS);
          created.timer.unref();
          pairs.set(requestId, created);
          pair = created;
        }
        if (pair[type]) {
          pair.error?.write(`error processing stream for request ${requestId}: `
            + `${type} stream already assigned`);
          return;
        }
        pair[type] = stream;
        if (type === 'error') stream.resume(); // the client half-closes it at once
        if (pair.data && pair.error) {
          clearTimeout(pair.timer);
          pairs.delete(requestId);
          void forwardPair(pair.data, pair.error, dial, target, conns);
        }
      },
      onClose() {
        for (const p of pairs.values()) clearTimeout(p.timer);
        for (const c of conns) c.destroy();
        resolve();
      },
    });
    void session;
  });
}

async function forwardPair(
  data: SpdyStream, error: SpdyStream, dial: Dial, target: PortForwardTarget, conns: Set<Duplex>,
): Promise<void> {
  const port = Number(headerValue(data.headers, 'port'));
  let conn: Duplex;
  try {
    conn = await dial(port);
  } catch (e) {
    error.end(errorText(port, target, e));
    data.end();
    return;
  }
  if (data.destroyed) {
    conn.destroy();
    return;
  }
  conns.add(conn);
  await join(data, conn);
  conns.delete(conn);
  if (!data.writableEnded) data.end();
  error.end();
}

async function serveWsChannels(
  socket: Duplex, head: Buffer, protocol: string, ports: readonly number[], dial: Dial,
  target: PortForwardTarget,
): Promise<void> {
  const modes: ChannelMode[] = ports.flatMap((): ChannelMode[] => ['readwrite', 'write']);
  const conns = new Set<Duplex>();
  const opts = { base64: protocol.includes('base64'), supportsClose: false };
  const channels = new WsChannels(socket, head, modes, opts, () => {
    for (const c of conns) c.destroy();
  });
  await Promise.all(ports.map(async (port, i) => {
    const data = channels.channels[2 * i]!;
    const error = channels.channels[2 * i + 1]!;
    const portBytes = Buffer.alloc(2);
    portBytes.writeUInt16LE(port, 0);
    data.write(portBytes);
    error.write(portBytes);
    data.on('error', () => {});
    let conn: Duplex;
    try {
      conn = await dial(port);
    } catch (e) {
      error.write(errorText(port, target, e));
      return;
    }
    if (channels.isClosed) {
      conn.destroy();
      return;
    }
    conns.add(conn);
    await join(data, conn);
    conns.delete(conn);
  }));
  channels.close();
}
