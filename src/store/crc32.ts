// CRC-32 (IEEE, as zlib). Node >= 20.15 ships `zlib.crc32`; older 20.x falls back to a table.
import * as zlib from 'node:zlib';

type Crc32 = (data: Uint8Array) => number;

function buildTableCrc32(): Crc32 {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return (data) => {
    let crc = 0xffffffff;
    for (let i = 0; i < data.length; i++) crc = table[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
    return (crc ^ 0xffffffff) >>> 0;
  };
}

const native = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;

/** CRC-32 of `data` as an unsigned 32-bit integer. */
export const crc32: Crc32 =
  typeof native === 'function' ? (d) => native(d) >>> 0 : buildTableCrc32();

/** Exposed for the test that checks both implementations agree. */
export const tableCrc32: Crc32 = buildTableCrc32();
