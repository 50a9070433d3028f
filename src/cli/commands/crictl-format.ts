// crictl's text formats: its tables (Go's tabwriter with minwidth 20, padding 3: every column but
// the last is at least 20 wide and 3 wider than its longest cell), go-units' HumanDuration for
// CREATED ("N seconds ago") and HumanSizeWithPrecision for SIZE, and 13-character IDs.

export const TRUNCATED_ID_LEN = 13;

export function truncatedId(id: string, prefix = ''): string {
  const s = prefix && id.startsWith(prefix) ? id.slice(prefix.length) : id;
  return s.slice(0, TRUNCATED_ID_LEN);
}

const width = (s: string) => [...s].length;

/** Rows as tabwriter(minwidth 20, tabwidth 1, padding 3, ' ') lays them out. */
export function table(rows: readonly (readonly string[])[]): string {
  const cols = Math.max(0, ...rows.map((r) => r.length));
  const widths = Array.from({ length: cols - 1 }, (_, i) =>
    Math.max(20, ...rows.map((r) => (i < r.length - 1 ? width(r[i]!) + 3 : 0))));
  return rows.map((r) => r.map((cell, i) => (i < r.length - 1 ? cell + ' '.repeat(widths[i]! - width(cell)) : cell))
    .join('')).map((l) => `${l}\n`).join('');
}

/** go-units HumanDuration. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < 1) return 'Less than a second';
  if (seconds === 1) return '1 second';
  if (seconds < 60) return `${seconds} seconds`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes === 1) return 'About a minute';
  if (minutes < 60) return `${minutes} minutes`;
  const hours = Math.round(ms / 3_600_000);
  if (hours === 1) return 'About an hour';
  if (hours < 48) return `${hours} hours`;
  if (hours < 24 * 7 * 2) return `${Math.trunc(hours / 24)} days`;
  if (hours < 24 * 30 * 2) return `${Math.trunc(hours / 24 / 7)} weeks`;
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24 / 30)} months`;
  return `${Math.trunc(ms / 3_600_000 / 24 / 365)} years`;
}

/** "N seconds ago" for a CRI nanosecond timestamp. */
export function createdAgo(createdAtNanos: string, nowMs = Date.now()): string {
  return `${humanDuration(nowMs - Number(BigInt(createdAtNanos) / 1_000_000n))} ago`;
}

/** go-units HumanSizeWithPrecision(size, 3): decimal units, %.3g. */
export function humanSize(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];
  let n = bytes;
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return `${Number(n.toPrecision(3))}${units[i]}`;
}

/** JSON with every object's keys sorted (Go's encoding/json of a map, as `crictl inspect`). */
export function sortedJson(v: unknown): string {
  const sort = (x: unknown): unknown => (Array.isArray(x) ? x.map(sort) : x && typeof x === 'object'
    ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort((x as Record<string, unknown>)[k])])) : x);
  return JSON.stringify(sort(v), null, 2);
}
