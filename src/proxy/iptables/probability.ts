// `statistic --probability` values: Go's fmt.Sprintf("%0.10f", 1.0/float64(n)). Go rounds the
// exact binary value half to even; JavaScript's toFixed rounds exact ties up (1/2048 differs),
// so the decimal is computed exactly from the float64's bits.

const SCALE = 10n ** 10n;

/** Go `%0.10f` of a finite, non-negative float64. */
export function goFixed10(x: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const expBits = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  if (expBits !== 0) mant |= 1n << 52n;
  const exp = (expBits === 0 ? 1 : expBits) - 1075; // value = mant * 2^exp
  let q: bigint;
  if (exp >= 0) {
    q = (mant << BigInt(exp)) * SCALE;
  } else {
    const den = 1n << BigInt(-exp);
    const num = mant * SCALE;
    q = num / den;
    const twice = (num % den) * 2n;
    if (twice > den || (twice === den && q % 2n === 1n)) q += 1n;
  }
  const s = q.toString().padStart(11, '0');
  return `${s.slice(0, -10)}.${s.slice(-10)}`;
}

/** A cache of PROB(n) = 1/n strings, as the proxier keeps one. */
export class Probabilities {
  private readonly cache: string[] = [];

  get(n: number): string {
    let s = this.cache[n];
    if (s === undefined) this.cache[n] = s = goFixed10(1 / n);
    return s;
  }
}
