// A tiny protobuf encoder for building request bodies by hand in tests.
// A message is a list of [fieldNumber, value]: number/bigint/boolean → varint, string/Uint8Array
// → length-delimited, a nested list → sub-message, {fixed32}/{fixed64} → those wire types.

export type PbValue = number | bigint | boolean | string | Uint8Array | PbMessage
  | { fixed32: number } | { fixed64: bigint };
export type PbMessage = Array<[number, PbValue]>;

function varint(v: bigint): number[] {
  let x = BigInt.asUintN(64, v);
  const out: number[] = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x > 0n) b |= 0x80;
    out.push(b);
  } while (x > 0n);
  return out;
}

export function encode(msg: PbMessage): Buffer {
  const parts: Buffer[] = [];
  for (const [num, v] of msg) {
    const tag = (wt: number) => Buffer.from(varint(BigInt(num * 8 + wt)));
    if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') {
      parts.push(tag(0), Buffer.from(varint(BigInt(typeof v === 'boolean' ? Number(v) : v))));
    } else if (typeof v === 'string' || v instanceof Uint8Array || Array.isArray(v)) {
      const body = typeof v === 'string' ? Buffer.from(v) : Array.isArray(v) ? encode(v)
        : Buffer.from(v);
      parts.push(tag(2), Buffer.from(varint(BigInt(body.length))), body);
    } else if ('fixed32' in v) {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(v.fixed32);
      parts.push(tag(5), b);
    } else {
      const b = Buffer.alloc(8);
      b.writeBigUInt64LE(v.fixed64);
      parts.push(tag(1), b);
    }
  }
  return Buffer.concat(parts);
}

/** `k8s\0` + runtime.Unknown{typeMeta, raw, contentEncoding '', contentType ''}. */
export function envelope(apiVersion: string, kind: string, raw: PbMessage): Buffer {
  return Buffer.concat([
    Buffer.from([0x6b, 0x38, 0x73, 0x00]),
    encode([[1, [[1, apiVersion], [2, kind]]], [2, encode(raw)], [3, ''], [4, '']]),
  ]);
}

/** A map<string,string> as repeated entries on field `num`. */
export function mapEntries(num: number, m: Record<string, string | Uint8Array>): PbMessage {
  return Object.entries(m).map(([k, v]) => [num, [[1, k], [2, v]]]);
}

/** An ObjectMeta as gogo writes it: every non-pointer field present. */
export function objectMeta(name: string, labels: Record<string, string> = {}): PbMessage {
  return [[1, name], [2, ''], [3, ''], [4, ''], [5, ''], [6, ''], [7, 0], [8, []],
    ...mapEntries(11, labels)];
}
