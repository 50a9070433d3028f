// Protobuf wire-format reading (varint, 64-bit, length-delimited, 32-bit). Enough to walk any
// message and skip what the schema does not name. Errors are KDP_BAD_REQUEST: the body is the
// client's.

import { kdpError } from '../../errors.js';

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_START_GROUP = 3;
export const WIRE_END_GROUP = 4;
export const WIRE_FIXED32 = 5;

export interface Tag {
  readonly field: number;
  readonly wireType: number;
}

function truncated(): never {
  throw kdpError('KDP_BAD_REQUEST', 'protobuf body is truncated');
}

export class ProtoReader {
  private pos: number;
  private readonly buf: Buffer;

  constructor(bytes: Uint8Array, start = 0, private readonly end = bytes.length) {
    this.buf = Buffer.isBuffer(bytes) ? bytes
      : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** A varint as a signed 64-bit value (int32 negatives are sign-extended to 10 bytes). */
  varint(): bigint {
    return this.slowVarint(this.pos);
  }

  private slowVarint(start: number): bigint {
    this.pos = start;
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) truncated();
      const b = this.buf[this.pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return BigInt.asIntN(64, result);
      shift += 7n;
    }
    throw kdpError('KDP_BAD_REQUEST', 'protobuf varint longer than 10 bytes');
  }

  /** A varint as a JS number (exact up to 2^53); the common short case avoids BigInt. */
  int(): number {
    const start = this.pos;
    let result = 0;
    for (let i = 0; i < 4; i++) {
      if (this.pos >= this.end) truncated();
      const b = this.buf[this.pos++]!;
      result |= (b & 0x7f) << (7 * i);
      if ((b & 0x80) === 0) return result;
    }
    return Number(this.slowVarint(start));
  }

  tag(): Tag {
    const v = this.int();
    const field = Math.floor(v / 8);
    if (field === 0) throw kdpError('KDP_BAD_REQUEST', 'protobuf field number 0');
    return { field, wireType: v & 7 };
  }

  /** The bytes of a length-delimited field. */
  bytes(): Uint8Array {
    const len = this.int();
    if (len < 0 || this.pos + len > this.end) truncated();
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }

  string(): string {
    const len = this.int();
    if (len < 0 || this.pos + len > this.end) truncated();
    const s = this.buf.toString('utf8', this.pos, this.pos + len);
    this.pos += len;
    return s;
  }

  /** A reader over the bytes of a length-delimited field. */
  sub(): ProtoReader {
    const b = this.bytes();
    return new ProtoReader(b);
  }

  skip(wireType: number): void {
    switch (wireType) {
      case WIRE_VARINT: this.varint(); return;
      case WIRE_FIXED64: this.advance(8); return;
      case WIRE_LEN: this.bytes(); return;
      case WIRE_FIXED32: this.advance(4); return;
      case WIRE_START_GROUP: this.skipGroup(); return;
      default: throw kdpError('KDP_BAD_REQUEST', `protobuf wire type ${wireType} is not valid`);
    }
  }

  private advance(n: number): void {
    if (this.pos + n > this.end) truncated();
    this.pos += n;
  }

  private skipGroup(): void {
    for (;;) {
      if (this.done) truncated();
      const t = this.tag();
      if (t.wireType === WIRE_END_GROUP) return;
      this.skip(t.wireType);
    }
  }
}
