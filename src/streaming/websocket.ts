// The server end of RFC 6455 as the streaming protocols need it: handshake with a chosen
// sub-protocol (any string, e.g. `SPDY/3.1+portforward.k8s.io`, which is not an RFC token),
// binary/text messages, fragmentation, ping/pong, close. No extensions. Written here rather
// than taken from `ws` for the data path: client frames are masked, and unmasking 32 bits at a
// time in place (no native addon) keeps port-forward uploads fast; sends are never copied.

import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { endianness } from 'node:os';
import type { Duplex } from 'node:stream';
import { refuseText } from './http-upgrade.js';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const LITTLE_ENDIAN = endianness() === 'LE';
/** Largest message accepted (a port-forward tunnel message is one SPDY write). */
const MAX_MESSAGE = 64 * 1024 * 1024;

export const OP_CONT = 0;
export const OP_TEXT = 1;
export const OP_BINARY = 2;
export const OP_CLOSE = 8;
export const OP_PING = 9;
export const OP_PONG = 10;

export interface WsEvents {
  /** A complete message; `data` may be a view into socket buffers (valid for the call). */
  onMessage(data: Buffer, binary: boolean): void;
  /** The connection ended (close frame, socket end or error); called once. */
  onClose(code: number): void;
}

/** XORs `buf` in place with the 4-byte mask, starting at mask phase `phase`. */
export function unmaskInPlace(buf: Buffer, mask: Buffer, phase: number): void {
  let i = 0;
  const n = buf.length;
  // Bytes until the view is 4-aligned, one at a time.
  while (i < n && (buf.byteOffset + i) % 4 !== 0) {
    buf[i] = buf[i]! ^ mask[(phase + i) & 3]!;
    i++;
  }
  const words = (n - i) >>> 2;
  if (words > 0) {
    const m = Buffer.from([0, 1, 2, 3].map((k) => mask[(phase + i + k) & 3]!));
    const m32 = LITTLE_ENDIAN ? m.readUInt32LE(0) : m.readUInt32BE(0); // typed arrays: host order
    const view = new Uint32Array(buf.buffer, buf.byteOffset + i, words);
    for (let w = 0; w < words; w++) view[w] = view[w]! ^ m32;
    i += words * 4;
  }
  while (i < n) {
    buf[i] = buf[i]! ^ mask[(phase + i) & 3]!;
    i++;
  }
}

function frameHeader(opcode: number, length: number): Buffer {
  if (length < 126) return Buffer.from([0x80 | opcode, length]);
  if (length < 65536) {
    const h = Buffer.allocUnsafe(4);
    h[0] = 0x80 | opcode;
    h[1] = 126;
    h.writeUInt16BE(length, 2);
    return h;
  }
  const h = Buffer.allocUnsafe(10);
  h[0] = 0x80 | opcode;
  h[1] = 127;
  h.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
  h.writeUInt32BE(length >>> 0, 6);
  return h;
}

/** An accepted WebSocket connection (server side). */
export class WsConnection {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private fragments: Buffer[] = [];
  private fragmentsSize = 0;
  private fragmentOpcode = 0;
  private closeSent = false;
  private ended = false;
  private paused = false;

  constructor(private readonly socket: Duplex, head: Buffer, private readonly events: WsEvents) {
    socket.on('data', (c: Buffer) => this.onData(c));
    socket.on('end', () => {
      socket.end();
      this.finish(1006);
    });
    socket.on('close', () => this.finish(1006));
    socket.on('error', () => this.finish(1006));
    (socket as { setNoDelay?: (v: boolean) => void }).setNoDelay?.(true);
    if (head.length > 0) this.onData(head);
  }

  get isOpen(): boolean {
    return !this.ended && !this.closeSent;
  }

  /** Bytes queued in the socket not yet handed to the kernel. */
  get bufferedAmount(): number {
    return this.socket.writableLength;
  }

  get needsDrain(): boolean {
    return this.socket.writableNeedDrain;
  }

  onDrain(cb: () => void): void {
    this.socket.once('drain', cb);
  }

  /** One message whose payload is `parts` concatenated; returns false when the socket is full. */
  send(opcode: number, parts: readonly Buffer[]): boolean {
    if (!this.isOpen || this.socket.destroyed) return true;
    let length = 0;
    for (const p of parts) length += p.length;
    this.socket.cork();
    let ok = this.socket.write(frameHeader(opcode, length));
    for (const p of parts) if (p.length > 0) ok = this.socket.write(p);
    this.socket.uncork();
    return ok;
  }

  /** Sends a close frame (default 1000); the socket ends after the client answers or soon. */
  close(code = 1000): void {
    if (this.ended || this.closeSent) return;
    const payload = Buffer.allocUnsafe(2);
    payload.writeUInt16BE(code, 0);
    this.send(OP_CLOSE, [payload]);
    this.closeSent = true;
    setTimeout(() => this.socket.destroy(), 5_000).unref();
  }

  /** Drops the connection without a close handshake. */
  terminate(): void {
    this.socket.destroy();
    this.finish(1006);
  }

  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.socket.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.socket.resume();
  }

  private finish(code: number): void {
    if (this.ended) return;
    this.ended = true;
    this.events.onClose(code);
  }

  private fail(code: number): void {
    this.close(code);
    this.socket.end();
    this.finish(code);
  }

  private onData(chunk: Buffer): void {
    if (this.ended) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (!this.ended && this.parseFrame());
  }

  private peekBytes(n: number): Buffer {
    while (this.chunks[0]!.length < n) {
      const [a, b] = this.chunks.splice(0, 2);
      this.chunks.unshift(Buffer.concat([a!, b!]));
    }
    return this.chunks[0]!;
  }

  private takeBytes(n: number): Buffer[] {
    this.buffered -= n;
    const parts: Buffer[] = [];
    while (n > 0) {
      const c = this.chunks[0]!;
      if (c.length <= n) {
        parts.push(c);
        this.chunks.shift();
        n -= c.length;
      } else {
        parts.push(c.subarray(0, n));
        this.chunks[0] = c.subarray(n);
        n = 0;
      }
    }
    return parts;
  }

  /** Handles one complete frame if buffered; false when more bytes are needed. */
  private parseFrame(): boolean {
    if (this.buffered < 2) return false;
    const h = this.peekBytes(2);
    const fin = (h[0]! & 0x80) !== 0;
    const rsv = h[0]! & 0x70;
    const opcode = h[0]! & 0x0f;
    const masked = (h[1]! & 0x80) !== 0;
    let length = h[1]! & 0x7f;
    let headerLen = 2;
    if (length === 126) headerLen = 4;
    else if (length === 127) headerLen = 10;
    if (masked) headerLen += 4;
    if (this.buffered < headerLen) return false;
    const head = this.peekBytes(headerLen);
    if (length === 126) length = head.readUInt16BE(2);
    else if (length === 127) length = head.readUInt32BE(2) * 2 ** 32 + head.readUInt32BE(6);
    if (rsv !== 0 || !masked) {
      this.fail(1002);
      return false;
    }
    if (length > MAX_MESSAGE) {
      this.fail(1009);
      return false;
    }
    if (this.buffered < headerLen + length) return false;
    const mask = Buffer.from(head.subarray(headerLen - 4, headerLen));
    this.takeBytes(headerLen);
    const parts = this.takeBytes(length);
    let phase = 0;
    for (const p of parts) {
      unmaskInPlace(p, mask, phase);
      phase = (phase + p.length) & 3;
    }
    this.onFrame(fin, opcode, parts, length);
    return true;
  }

  private onFrame(fin: boolean, opcode: number, parts: Buffer[], length: number): void {
    if (opcode >= 8) {
      if (!fin || length > 125) return this.fail(1002);
      const payload = parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
      if (opcode === OP_PING) this.send(OP_PONG, [payload]);
      else if (opcode === OP_CLOSE) {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        if (!this.closeSent) this.close(code === 1005 ? 1000 : code);
        this.socket.end();
        this.finish(code);
      }
      return;
    }
    if (opcode === OP_CONT) {
      if (this.fragmentOpcode === 0) return this.fail(1002);
    } else if (opcode === OP_TEXT || opcode === OP_BINARY) {
      if (this.fragmentOpcode !== 0) return this.fail(1002);
      if (fin) {
        const data = parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
        this.events.onMessage(data, opcode === OP_BINARY);
        return;
      }
      this.fragmentOpcode = opcode;
    } else {
      return this.fail(1002);
    }
    this.fragments.push(...parts);
    this.fragmentsSize += length;
    if (this.fragmentsSize > MAX_MESSAGE) return this.fail(1009);
    if (fin) {
      const data = Buffer.concat(this.fragments, this.fragmentsSize);
      const binary = this.fragmentOpcode === OP_BINARY;
      this.fragments = [];
      this.fragmentsSize = 0;
      this.fragmentOpcode = 0;
      this.events.onMessage(data, binary);
    }
  }
}

/**
 * Validates a WebSocket handshake and answers 101 with `protocol` ('' = none), or 400 with the
 * reason. Returns whether the connection is upgraded.
 */
export function acceptWebSocketHandshake(
  req: IncomingMessage, socket: Duplex, protocol: string,
): boolean {
  const key = String(req.headers['sec-websocket-key'] ?? '');
  const version = String(req.headers['sec-websocket-version'] ?? '');
  if (req.method !== 'GET') {
    refuseText(socket, 400, 'websocket: the client is not using the websocket protocol: '
      + 'request method is not GET');
    return false;
  }
  if (version !== '13') {
    refuseText(socket, 400,
      'websocket: unsupported version: 13 not found in \'Sec-Websocket-Version\' header');
    return false;
  }
  if (Buffer.from(key, 'base64').length !== 16) {
    refuseText(socket, 400, 'websocket: not a websocket handshake: \'Sec-WebSocket-Key\' '
      + 'header must be Base64 encoded value of 16-byte in length');
    return false;
  }
  const accept = createHash('sha1').update(key + GUID).digest('base64');
  const lines = ['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Connection: Upgrade',
    `Sec-WebSocket-Accept: ${accept}`];
  if (protocol !== '') lines.push(`Sec-WebSocket-Protocol: ${protocol}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  return true;
}
