// The Kubernetes WebSocket channel protocol (apimachinery wsstream): every message is one
// channel's data, byte 0 the channel number (ASCII '0'+n with the payload base64-encoded in the
// base64 variants, sent as text). v5.channel.k8s.io adds the client's half-close signal
// [255, n]. Here: the server handshake (via `ws`) and channels as Node streams with
// backpressure (a lagging reader pauses the socket; a full socket holds every writer).

import type { IncomingMessage } from 'node:http';
import { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { headerList } from './http-upgrade.js';

export const CLOSE_CHANNEL = 255;
const WRITE_BUFFER_LIMIT = 1024 * 1024;

/**
 * The first protocol of the client's list (client order) that `allowed` holds, as x/net's
 * websocket handshake picks it; '' when the client offered none and '' is allowed; undefined
 * when nothing matches (upstream answers 403).
 */
export function selectWebSocketProtocol(
  req: IncomingMessage, allowed: readonly string[],
): string | undefined {
  const offered = headerList(req, 'sec-websocket-protocol');
  if (offered.length === 0) return allowed.includes('') ? '' : undefined;
  return offered.find((p) => p !== '' && allowed.includes(p));
}

/** Completes the WebSocket handshake with `protocol` ('' = no Sec-WebSocket-Protocol). */
export function acceptWebSocket(
  req: IncomingMessage, socket: Duplex, head: Buffer, protocol: string,
): Promise<WebSocket> {
  // The protocol was chosen already; `ws` would refuse names that are not RFC 6455 tokens
  // (`SPDY/3.1+portforward.k8s.io`, which gorilla/websocket clients send), so it never sees them.
  const wss = new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false });
  delete req.headers['sec-websocket-protocol'];
  if (protocol !== '') {
    wss.on('headers', (headers: string[]) => { headers.push(`Sec-WebSocket-Protocol: ${protocol}`); });
  }
  return new Promise((resolve, reject) => {
    const onClose = (): void => reject(new Error('websocket handshake failed'));
    socket.once('close', onClose);
    wss.handleUpgrade(req, socket, head, (ws) => {
      socket.off('close', onClose);
      resolve(ws);
    });
  });
}

export type ChannelMode = 'read' | 'write' | 'readwrite' | 'ignore';

/** One channel: readable = the client's data for it, writable = data to the client. */
export class WsChannel extends Duplex {
  private remoteEnded = false;

  constructor(private readonly conn: WsChannels, readonly num: number, readonly mode: ChannelMode) {
    super({ allowHalfOpen: true, readableHighWaterMark: 256 * 1024 });
    if (mode === 'write' || mode === 'ignore') this.endRemote();
  }

  receive(data: Buffer): boolean {
    if (this.remoteEnded) return true;
    return this.push(data);
  }

  endRemote(): void {
    if (this.remoteEnded) return;
    this.remoteEnded = true;
    this.push(null);
  }

  override _read(): void {
    this.conn.channelReadable(this);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.mode === 'read' || this.mode === 'ignore') return cb();
    this.conn.send(this.num, chunk, cb);
  }
}

/** The channels of one WebSocket connection, created up front as upstream's wsstream.Conn. */
export class WsChannels {
  readonly channels: WsChannel[];
  private readonly base64: boolean;
  private readonly blocked = new Set<WsChannel>();
  private drainWaiters: Array<() => void> = [];
  private closed = false;

  constructor(
    readonly ws: WebSocket,
    modes: readonly ChannelMode[],
    opts: { base64: boolean; supportsClose: boolean },
    private readonly onClose: () => void,
  ) {
    this.base64 = opts.base64;
    this.channels = modes.map((m, i) => new WsChannel(this, i, m));
    ws.on('message', (data: Buffer, isBinary: boolean) => this.onMessage(data, isBinary, opts.supportsClose));
    ws.on('close', () => this.shutdown());
    ws.on('error', () => this.shutdown());
    const raw = (ws as unknown as { _socket?: Duplex })._socket;
    raw?.on('drain', () => this.flushDrainWaiters());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  send(num: number, data: Buffer, cb: (err?: Error | null) => void): void {
    if (this.closed || this.ws.readyState !== WebSocket.OPEN) return cb();
    if (this.base64) {
      this.ws.send(`${String.fromCharCode(48 + num)}${data.toString('base64')}`);
    } else {
      const frame = Buffer.allocUnsafe(data.length + 1);
      frame[0] = num;
      data.copy(frame, 1);
      this.ws.send(frame, { binary: true });
    }
    if (this.ws.bufferedAmount < WRITE_BUFFER_LIMIT) cb();
    else this.drainWaiters.push(cb);
  }

  /** Ends the connection with a normal close (1000), once queued messages are sent. */
  close(): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
    this.shutdown();
  }

  channelReadable(ch: WsChannel): void {
    if (this.blocked.delete(ch) && this.blocked.size === 0 && !this.closed) this.ws.resume();
  }

  private flushDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }

  private shutdown(): void {
    if (this.closed) return;
    this.closed = true;
    for (const ch of this.channels) ch.endRemote();
    this.flushDrainWaiters();
    this.onClose();
  }

  private onMessage(data: Buffer, isBinary: boolean, supportsClose: boolean): void {
    if (data.length === 0) return;
    if (supportsClose && data[0] === CLOSE_CHANNEL) {
      const ch = data.length === 2 ? this.channels[data[1]!] : undefined;
      if (!ch) {
        this.ws.terminate(); // upstream stops serving on a malformed close signal
        return;
      }
      ch.endRemote();
      return;
    }
    let num = data[0]!;
    let payload = data.subarray(1);
    if (this.base64) {
      num -= 48;
      payload = Buffer.from((isBinary ? payload : data.subarray(1)).toString('latin1'), 'base64');
    }
    const ch = this.channels[num];
    if (!ch || ch.mode === 'write' || ch.mode === 'ignore') return;
    if (!ch.receive(payload) && !this.blocked.has(ch)) {
      this.blocked.add(ch);
      this.ws.pause();
    }
  }
}
