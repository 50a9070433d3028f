// The Kubernetes WebSocket channel protocol (apimachinery wsstream): every message is one
// channel's data, byte 0 the channel number (ASCII '0'+n with the payload base64-encoded in the
// base64 variants, sent as text). v5.channel.k8s.io adds the client's half-close signal
// [255, n]. Channels are Node streams with backpressure (a lagging reader pauses the socket; a
// full socket holds every writer). Also: a WebSocket as a byte stream, for the SPDY tunnel.

import type { IncomingMessage } from 'node:http';
import { Duplex } from 'node:stream';
import { headerList } from './http-upgrade.js';
import { OP_BINARY, OP_TEXT, WsConnection, acceptWebSocketHandshake } from './websocket.js';

export const CLOSE_CHANNEL = 255;

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

export type ChannelMode = 'read' | 'write' | 'readwrite' | 'ignore';

/** One channel: readable = the client's data for it, writable = data to the client. */
export class WsChannel extends Duplex {
  private remoteEnded = false;

  constructor(private readonly conn: WsChannels, readonly num: number, readonly mode: ChannelMode) {
    super({
      allowHalfOpen: true, readableHighWaterMark: 256 * 1024, writableHighWaterMark: 1024 * 1024,
    });
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
    this.conn.send(this.num, [chunk], cb);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, cb: (err?: Error | null) => void): void {
    if (this.mode === 'read' || this.mode === 'ignore') return cb();
    this.conn.send(this.num, chunks.map((c) => c.chunk), cb);
  }
}

/** The channels of one WebSocket connection, created up front as upstream's wsstream.Conn. */
export class WsChannels {
  readonly channels: WsChannel[];
  private readonly ws: WsConnection;
  private readonly base64: boolean;
  private readonly blocked = new Set<WsChannel>();
  private closed = false;

  /** `socket` has been answered 101 (acceptWebSocketHandshake); `head` is what followed. */
  constructor(
    socket: Duplex, head: Buffer,
    modes: readonly ChannelMode[],
    opts: { base64: boolean; supportsClose: boolean },
    private readonly onClose: () => void,
  ) {
    this.base64 = opts.base64;
    this.channels = modes.map((m, i) => new WsChannel(this, i, m));
    this.ws = new WsConnection(socket, head, {
      onMessage: (data, binary) => this.onMessage(data, binary, opts.supportsClose),
      onClose: () => this.shutdown(),
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** One message on channel `num` (its payload never copied in binary mode). */
  send(num: number, parts: readonly Buffer[], cb: (err?: Error | null) => void): void {
    if (this.closed || !this.ws.isOpen) return cb();
    if (this.base64) {
      const text = Buffer.concat(parts).toString('base64');
      this.ws.send(OP_TEXT, [Buffer.from(`${String.fromCharCode(48 + num)}${text}`)]);
    } else {
      this.ws.send(OP_BINARY, [Buffer.from([num]), ...parts]);
    }
    if (this.ws.needsDrain) this.ws.onDrain(() => cb());
    else cb();
  }

  /** Ends the connection with a normal close (1000), after queued messages. */
  close(): void {
    this.ws.close(1000);
    this.shutdown();
  }

  channelReadable(ch: WsChannel): void {
    if (this.blocked.delete(ch) && this.blocked.size === 0 && !this.closed) this.ws.resume();
  }

  private shutdown(): void {
    if (this.closed) return;
    this.closed = true;
    for (const ch of this.channels) ch.endRemote();
    this.onClose();
  }

  private onMessage(data: Buffer, binary: boolean, supportsClose: boolean): void {
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
      payload = Buffer.from(payload.toString('latin1'), 'base64');
    }
    void binary; // x/net's websocket reads text and binary frames alike
    const ch = this.channels[num];
    if (!ch || ch.mode === 'write' || ch.mode === 'ignore') return;
    if (!ch.receive(payload) && !this.blocked.has(ch)) {
      this.blocked.add(ch);
      this.ws.pause();
    }
  }
}

/**
 * A WebSocket as a byte stream (kubectl's SPDY tunnel): each write is one binary message
 * (corked writes become one message), incoming messages are concatenated.
 */
export class WsByteStream extends Duplex {
  private readonly ws: WsConnection;

  constructor(socket: Duplex, head: Buffer) {
    super({
      allowHalfOpen: false, readableHighWaterMark: 1024 * 1024, writableHighWaterMark: 1024 * 1024,
    });
    this.ws = new WsConnection(socket, head, {
      onMessage: (data) => {
        if (data.length > 0 && !this.push(data)) this.ws.pause();
      },
      onClose: () => { this.push(null); },
    });
  }

  override _read(): void {
    this.ws.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.sendParts([chunk], cb);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, cb: (err?: Error | null) => void): void {
    this.sendParts(chunks.map((c) => c.chunk), cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.ws.close(1000);
    cb();
  }

  override _destroy(err: Error | null, cb: (err: Error | null) => void): void {
    if (this.ws.isOpen) this.ws.close(1000);
    cb(err);
  }

  private sendParts(parts: readonly Buffer[], cb: (err?: Error | null) => void): void {
    if (!this.ws.isOpen) return cb();
    this.ws.send(OP_BINARY, parts);
    if (this.ws.needsDrain) this.ws.onDrain(() => cb());
    else cb();
  }
}

export { acceptWebSocketHandshake };
