// nft durations: `3h`, `1m30s`, `2h59m58s980ms` ↔ seconds.

const UNITS: ReadonlyArray<readonly [string, number]> = [['d', 86400], ['h', 3600], ['m', 60],
  ['s', 1]];

/** Seconds as nft prints them (`10800` → `3h`, `0` → `0s`). */
export function formatDuration(seconds: number): string {
  let rest = Math.floor(seconds);
  let out = '';
  for (const [u, n] of UNITS) {
    const q = Math.floor(rest / n);
    if (q > 0) out += `${q}${u}`;
    rest -= q * n;
  }
  return out === '' ? '0s' : out;
}

/** `3h` / `10800s` / `1h2m3s500ms` → seconds (milliseconds dropped); undefined if invalid. */
export function parseDuration(text: string): number | undefined {
  const re = /(\d+)(ms|d|h|m|s)/gy;
  let total = 0;
  let seen = false;
  let m: RegExpExecArray | null;
  re.lastIndex = 0;
  while ((m = re.exec(text)) !== null) {
    seen = true;
    const n = Number(m[1]);
    if (m[2] !== 'ms') total += n * UNITS.find(([u]) => u === m![2])![1];
    if (re.lastIndex === text.length) return total;
  }
  return seen && re.lastIndex === text.length ? total : undefined;
}
