// resource.Quantity parsing for scheduling: CPU in millicores, everything else in base units.
// Accepts the serialised forms upstream accepts (`100m`, `0.5`, `128Mi`, `1G`, `1e3`, numbers).

const BINARY: Record<string, number> = {
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};
const DECIMAL: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
};

/** The quantity's value in base units; NaN when it does not parse. */
export function parseQuantity(q: string | number | undefined): number {
  if (q === undefined) return 0;
  if (typeof q === 'number') return q;
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/
    .exec(q.trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  if (m[2]) return n * 10 ** Number(m[2].slice(1));
  const suffix = m[3] ?? '';
  return n * (BINARY[suffix] ?? DECIMAL[suffix] ?? NaN);
}

/** CPU quantity in millicores, rounded up as upstream's MilliValue. */
export function milliCPU(q: string | number | undefined): number {
  return Math.ceil(parseQuantity(q) * 1000 - 1e-9);
}

/** Byte (or count) quantity, rounded up as upstream's Value. */
export function quantityValue(q: string | number | undefined): number {
  return Math.ceil(parseQuantity(q) - 1e-9);
}
