// SPDY/3.1 framing (draft-mbelshe-httpbis-spdy-00 + 3.1's WINDOW_UPDATE), the subset Go's
// moby/spdystream speaks: SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS,
// WINDOW_UPDATE and data frames. Header blocks are zlib-compressed with the SPDY/3 dictionary,
// one context per direction for the session's life, each block ending in a sync flush.

import { Deflate, Inflate } from 'pako';
import { SPDY3_HEADER_DICTIONARY } from './spdy-dictionary.js';

export const SPDY_VERSION = 3;
export const TYPE_SYN_STREAM = 1;
export const TYPE_SYN_REPLY = 2;
export const TYPE_RST_STREAM = 3;
export const TYPE_SETTINGS = 4;
export const TYPE_PING = 6;
export const TYPE_GOAWAY = 7;
export const TYPE_HEADERS = 8;
export const TYPE_WINDOW_UPDATE = 9;

export const FLAG_FIN = 0x01;

/** RST_STREAM status codes used here (SPDY/3 2.6.3). */
export const RST_PROTOCOL_ERROR = 1;
export const RST_INVALID_STREAM = 2;
export const RST_CANCEL = 5;

/** Largest data frame payload (24-bit length). */
export const MAX_DATA_PAYLOAD = 0xffffff;

/** Header names are lower-case (Go's framer rejects others); a name may carry several values. */
export type SpdyHeaders = Map<string, string[]>;

export type SpdyFrame =
  | { kind: 'data'; streamId: number; flags: number; data: Buffer[] }
  | { kind: 'control'; type: number; flags: number; payload: Buffer };

/** Splits a byte stream into frames; payloads are views into the input where possible. */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  /** The next complete frame, or undefined when more bytes are needed. */
  next(): SpdyFrame | undefined {
    if (this.buffered < 8) return undefined;
    const head = this.peek(8);
    const length = head.readUIntBE(5, 3);
    if (this.buffered < 8 + length) return undefined;
    const flags = head[4]!;
    const control = (head[0]! & 0x80) !== 0;
    const word0 = control ? head.readUInt16BE(2) : head.readUInt32BE(0) & 0x7fffffff;
    this.take(8);
    const parts = this.take(length);
    if (control) {
      const payload = parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
      return { kind: 'control', type: word0, flags, payload };
    }
    // Data may span several reads: its pieces are passed on as they are, never joined.
    return { kind: 'data', streamId: word0, flags, data: parts };
  }

  private peek(n: number): Buffer {
    while (this.chunks[0]!.length < n) {
      const [a, b] = this.chunks.splice(0, 2);
      this.chunks.unshift(Buffer.concat([a!, b!]));
    }
    return this.chunks[0]!.subarray(0, n);
  }

  /** Removes n bytes from the front, as views into the buffered chunks. */
  private take(n: number): Buffer[] {
    this.buffered -= n;
    const parts: Buffer[] = [];
    let need = n;
    while (need > 0) {
      const c = this.chunks[0]!;
      if (c.length <= need) {
        parts.push(c);
        this.chunks.shift();
        need -= c.length;
      } else {
        parts.push(c.subarray(0, need));
        this.chunks[0] = c.subarray(need);
        need = 0;
      }
    }
    return parts;
  }
}

/** The 8-byte header of a data frame carrying `length` bytes. */
export function dataFrameHeader(streamId: number, length: number, fin: boolean): Buffer {
  const out = Buffer.allocUnsafe(8);
  out.writeUInt32BE(streamId & 0x7fffffff, 0);
  out.writeUInt32BE(((fin ? FLAG_FIN : 0) << 24) | length, 4);
  return out;
}

export function dataFrame(streamId: number, data: Buffer, fin: boolean): Buffer {
  const out = Buffer.allocUnsafe(8 + data.length);
  out.writeUInt32BE(streamId & 0x7fffffff, 0);
  out.writeUInt32BE(((fin ? FLAG_FIN : 0) << 24) | data.length, 4);
  data.copy(out, 8);
  return out;
}

export function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(8 + payload.length);
  out.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  out.writeUInt16BE(type, 2);
  out.writeUInt32BE(((flags & 0xff) << 24 | payload.length) >>> 0, 4);
  payload.copy(out, 8);
  return out;
}

function u32(...values: number[]): Buffer {
  const b = Buffer.allocUnsafe(4 * values.length);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, 4 * i));
  return b;
}

export function rstStreamFrame(streamId: number, status: number): Buffer {
  return controlFrame(TYPE_RST_STREAM, 0, u32(streamId & 0x7fffffff, status));
}

export function pingFrame(id: number): Buffer {
  return controlFrame(TYPE_PING, 0, u32(id));
}

export function goAwayFrame(lastGoodStreamId: number, status = 0): Buffer {
  return controlFrame(TYPE_GOAWAY, 0, u32(lastGoodStreamId & 0x7fffffff, status));
}

/** Compresses outgoing header blocks; one per session direction. */
export class HeaderEncoder {
  private readonly deflate = new Deflate({ level: 9, dictionary: SPDY3_HEADER_DICTIONARY });
  private out: Uint8Array[] = [];

  constructor() {
    this.deflate.onData = (chunk: Uint8Array) => { this.out.push(chunk); };
  }

  encode(headers: SpdyHeaders): Buffer {
    const parts: Buffer[] = [u32(headers.size)];
    for (const [name, values] of headers) {
      const n = Buffer.from(name.toLowerCase(), 'utf8');
      const v = Buffer.from(values.join('\0'), 'utf8');
      parts.push(u32(n.length), n, u32(v.length), v);
    }
    this.out = [];
    if (!this.deflate.push(Buffer.concat(parts), 2 /* Z_SYNC_FLUSH */)) {
      throw new Error(`spdy: header compression failed: ${this.deflate.msg}`);
    }
    return Buffer.concat(this.out.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength)));
  }
}

/** Largest header block accepted once decompressed (kubectl's are a few dozen bytes). */
export const MAX_HEADER_BLOCK = 256 * 1024;

/** Decompresses incoming header blocks; one per session direction. */
export class HeaderDecoder {
  private readonly inflate = new Inflate({ dictionary: SPDY3_HEADER_DICTIONARY });
  private out: Uint8Array[] = [];
  private outSize = 0;

  constructor() {
    this.inflate.onData = (chunk: Uint8Array) => {
      this.outSize += chunk.length;
      if (this.outSize > MAX_HEADER_BLOCK) throw new Error('spdy: header block too large');
      this.out.push(chunk);
    };
  }

  decode(block: Buffer): SpdyHeaders {
    this.out = [];
    this.outSize = 0;
    if (block.length > 0 && !this.inflate.push(block, 2 /* Z_SYNC_FLUSH */)) {
      throw new Error(`spdy: header block does not decompress: ${this.inflate.msg}`);
    }
    const raw = Buffer.concat(this.out.map((c) => Buffer.from(c.buffer, c.byteOffset, c.length)));
    return parseHeaderBlock(raw);
  }
}

function parseHeaderBlock(raw: Buffer): SpdyHeaders {
  const headers: SpdyHeaders = new Map();
  if (raw.length < 4) throw new Error('spdy: header block shorter than its count');
  const count = raw.readUInt32BE(0);
  let at = 4;
  const field = (): string => {
    if (at + 4 > raw.length) throw new Error('spdy: header block truncated');
    const len = raw.readUInt32BE(at);
    at += 4;
    if (at + len > raw.length) throw new Error('spdy: header block truncated');
    const s = raw.toString('utf8', at, at + len);
    at += len;
    return s;
  };
  for (let i = 0; i < count; i++) {
    const name = field().toLowerCase();
    const values = field().split('\0');
    headers.set(name, [...(headers.get(name) ?? []), ...values]);
  }
  return headers;
}

/** First value of a header, or '' (Go's http.Header.Get). */
export function headerValue(headers: SpdyHeaders, name: string): string {
  return headers.get(name.toLowerCase())?.[0] ?? '';
}
