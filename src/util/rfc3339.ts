// Go's time.Parse(time.RFC3339, s) as a predicate and a value: `YYYY-MM-DDTHH:MM:SS`, an
// optional fraction (up to nanoseconds), then `Z` or `±HH:MM`; fields in range (a 30 February
// is an error in Go, not 2 March as Date.parse has it). Anything else is undefined — callers
// that must fail closed (a bootstrap token's expiration) treat that as expired.

const TS = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-](\d\d):(\d\d))$/;

/** Nanoseconds since the epoch, or undefined when `text` is not RFC 3339 as Go parses it. */
export function parseRfc3339(text: string): bigint | undefined {
  const m = TS.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth || h > 23 || mi > 59 || s > 59) return undefined;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return undefined;
  const ms = Date.parse(`${text.slice(0, 19)}${m[8]}`);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt((m[7] ?? '').padEnd(9, '0') || '0');
}
