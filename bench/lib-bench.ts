// Shared benchmark helpers: a seeded PRNG (so every run generates the same inputs), percentiles
// and a uniform way to print a figure with its target ratio.

/** Seeded PRNG shared with the scheduler's tie-breaks (mulberry32). */
export { seededRng as seededRandom } from '../src/scheduler/rng.js';

export function percentile(sortedAsc: readonly number[], p: number): number {
  if (sortedAsc.length === 0) return NaN;
  const i = Math.min(sortedAsc.length - 1, Math.ceil((p / 100) * sortedAsc.length) - 1);
  return sortedAsc[Math.max(0, i)]!;
}

/**
 * Prints `name: value unit (target ≤|≥ T unit, ratio R)`. Ratio > 1 means better than target
 * for ≥ targets (value/target) and for ≤ targets (target/value).
 */
export function report(
  name: string,
  value: number,
  unit: string,
  target?: { op: '<=' | '>='; value: number },
): void {
  const v = Number.isInteger(value) ? String(value) : value.toFixed(value < 10 ? 3 : 1);
  if (!target) {
    console.log(`${name}: ${v} ${unit}`);
    return;
  }
  const ratio = target.op === '>=' ? value / target.value : target.value / value;
  const ok = ratio >= 1 ? 'MET' : 'MISSED';
  console.log(`${name}: ${v} ${unit} (target ${target.op} ${target.value} ${unit}; ` +
    `ratio ${ratio.toFixed(2)} ${ok})`);
}

export function mib(bytes: number): number {
  return bytes / 1024 / 1024;
}
