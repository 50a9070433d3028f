// SHA-256 (FIPS 180-4) of short strings, in plain JavaScript. Chain and set names of every
// proxy mode are hashes of a service port (and endpoint) name: a large first sync makes 100k+
// of them, and for inputs of a block or two a call into the crypto binding (plus the hex string
// it returns) costs more than the rounds themselves. Results are checked against node:crypto
// in test/proxy/name-cache.test.ts.

const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const INIT = Int32Array.from([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

/** Compression of one 64-byte block (`w[0..15]` filled) into `h`. */
function compress(h: Int32Array, w: Int32Array): void {
  for (let i = 16; i < 64; i++) {
    const x = w[i - 15]!;
    const y = w[i - 2]!;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
  }
  let a = h[0]!, b = h[1]!, c = h[2]!, d = h[3]!, e = h[4]!, f = h[5]!, g = h[6]!, k = h[7]!;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (k + S1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    k = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
  }
  h[0] = (h[0]! + a) | 0; h[1] = (h[1]! + b) | 0; h[2] = (h[2]! + c) | 0;
  h[3] = (h[3]! + d) | 0; h[4] = (h[4]! + e) | 0; h[5] = (h[5]! + f) | 0;
  h[6] = (h[6]! + g) | 0; h[7] = (h[7]! + k) | 0;
}

/**
 * SHA-256 of the UTF-8 bytes of `s`, as eight big-endian 32-bit words (signed). The returned
 * array belongs to `state` and is overwritten by its next call.
 */
export function sha256Words(s: string, state: Sha256State = SHARED): Int32Array {
  // Not ASCII: the UTF-8 bytes differ from the UTF-16 units; hash the bytes (as latin1 units).
  return digest(s, state, 127) ?? digest(Buffer.from(s, 'utf8').toString('latin1'), state, 255)!;
}

/**
 * SHA-256 of `s` taken as one byte per UTF-16 unit; undefined (state clobbered) when a unit is
 * above `maxUnit`.
 */
function digest(s: string, state: Sha256State, maxUnit: number): Int32Array | undefined {
  const n = s.length;
  const { h, w } = state;
  h.set(INIT);
  const blocks = ((n + 8) >>> 6) + 1;
  for (let blk = 0, p = 0; blk < blocks; blk++) {
    for (let i = 0; i < 16; i++, p += 4) {
      let v = 0;
      let high = 0;
      for (let j = p; j < p + 4; j++) {
        const c = j < n ? s.charCodeAt(j) : j === n ? 0x80 : 0;
        if (j < n) high |= c;
        v = (v << 8) | c;
      }
      if (high > maxUnit) return undefined;
      w[i] = v;
    }
    finishBlock(state, blk === blocks - 1, n);
  }
  return h;
}

/** The length words of the last block, then the compression. */
function finishBlock(state: Sha256State, last: boolean, n: number): void {
  if (last) {
    state.w[14] = Math.floor(n / 0x20000000);
    state.w[15] = (n << 3) | 0;
  }
  compress(state.h, state.w);
}

/** Scratch space of `sha256Words`. */
export class Sha256State {
  readonly h = new Int32Array(8);
  readonly w = new Int32Array(64);
}

const SHARED = new Sha256State();

/** RFC 4648 base32 alphabet as character codes. */
const B32 = Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', (c) => c.charCodeAt(0));

/** The first 16 RFC 4648 base32 characters (the first 80 bits) of SHA-256(`s`). */
export function sha256Base32x16(s: string): string {
  const h = sha256Words(s);
  const w0 = h[0]!;
  const w1 = h[1]!;
  const w2 = h[2]!;
  // Four 20-bit groups, 4 characters each.
  const a = w0 >>> 12;
  const b = ((w0 & 0xfff) << 8) | (w1 >>> 24);
  const c = (w1 >>> 4) & 0xfffff;
  const d = ((w1 & 0xf) << 16) | (w2 >>> 16);
  return String.fromCharCode(
    B32[a >>> 15]!, B32[(a >>> 10) & 31]!, B32[(a >>> 5) & 31]!, B32[a & 31]!,
    B32[b >>> 15]!, B32[(b >>> 10) & 31]!, B32[(b >>> 5) & 31]!, B32[b & 31]!,
    B32[c >>> 15]!, B32[(c >>> 10) & 31]!, B32[(c >>> 5) & 31]!, B32[c & 31]!,
    B32[d >>> 15]!, B32[(d >>> 10) & 31]!, B32[(d >>> 5) & 31]!, B32[d & 31]!);
}

/** The first 8 RFC 4648 base32 characters (the first 40 bits) of SHA-256(`s`). */
export function sha256Base32x8(s: string): string {
  const h = sha256Words(s);
  const a = h[0]! >>> 12;
  const b = ((h[0]! & 0xfff) << 8) | (h[1]! >>> 24);
  return String.fromCharCode(
    B32[a >>> 15]!, B32[(a >>> 10) & 31]!, B32[(a >>> 5) & 31]!, B32[a & 31]!,
    B32[b >>> 15]!, B32[(b >>> 10) & 31]!, B32[(b >>> 5) & 31]!, B32[b & 31]!);
}
