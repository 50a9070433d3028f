// Go's base64.StdEncoding.Decode acceptance, for `format: byte` fields ([]byte in Go): where a
// value fails, as the byte offset Go's CorruptInputError reports (`illegal base64 data at input
// byte N`). Padding is required; CR and LF are skipped anywhere, as Go does.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const IS_B64 = new Uint8Array(256);
for (let i = 0; i < ALPHABET.length; i++) IS_B64[ALPHABET.charCodeAt(i)] = 1;

const PAD = 0x3d;
const isNewline = (c: number | undefined) => c === 0x0a || c === 0x0d;

/** The offset Go reports for a value it cannot decode, or -1 when it decodes. */
export function base64ErrorOffset(s: string): number {
  // Fast path: a plain, padded, newline-free value (what clients send).
  if (s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s)) return -1;
  const src = Buffer.from(s, 'utf8');
  let si = 0;
  while (si < src.length) {
    const r = decodeQuantum(src, si);
    if (r.err >= 0) return r.err;
    si = r.si;
  }
  return -1;
}

/** One 4-character quantum of Go's decodeQuantum: the next index, or the failing offset. */
function decodeQuantum(src: Buffer, start: number): { si: number; err: number } {
  let si = start;
  for (let j = 0; j < 4; j++) {
    if (si === src.length) {
      if (j === 0) return { si, err: -1 };
      return { si, err: si - j };
    }
    const c = src[si++]!;
    if (IS_B64[c]) continue;
    if (isNewline(c)) { j--; continue; }
    if (c !== PAD || j < 2) return { si, err: si - 1 };
    if (j === 2) {
      while (si < src.length && isNewline(src[si])) si++;
      if (si === src.length) return { si, err: src.length };
      if (src[si] !== PAD) return { si, err: si - 1 };
      si++;
    }
    while (si < src.length && isNewline(src[si])) si++;
    return { si, err: si < src.length ? si : -1 };
  }
  return { si, err: -1 };
}
