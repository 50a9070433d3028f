// Resource quantities as metrics-server writes them (k8s.io/apimachinery Quantity canonical
// form): CPU from nanocores with the largest exact decimal suffix (`250m`, `1500u`, `12345n`),
// memory from bytes with the largest exact binary suffix (`12Mi`, `4100Ki`) or plain bytes.

/** Canonical CPU quantity for a non-negative number of nanocores. */
export function cpuQuantity(nanocores: number): string {
  const n = Math.max(0, Math.round(nanocores));
  if (n === 0) return '0';
  if (n % 1e9 === 0) return String(n / 1e9);
  if (n % 1e6 === 0) return `${n / 1e6}m`;
  if (n % 1e3 === 0) return `${n / 1e3}u`;
  return `${n}n`;
}

/** Canonical memory quantity for a non-negative number of bytes. */
export function memoryQuantity(bytes: number): string {
  let b = Math.max(0, Math.round(bytes));
  if (b === 0) return '0';
  const suffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'];
  let i = 0;
  while (i < suffixes.length - 1 && b % 1024 === 0) { b /= 1024; i++; }
  return `${b}${suffixes[i]}`;
}

const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50 };

/** A quantity's value in base units (cores, bytes); undefined when it does not parse. */
export function parseQuantity(q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  if (typeof q === 'number') return q;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|[numkMGT]?)$/.exec(q.trim());
  if (!m) return undefined;
  const v = Number(m[1]);
  if (!Number.isFinite(v)) return undefined;
  return v * (BINARY[m[2]!] ?? DECIMAL[m[2]!] ?? 1);
}
