// Go's time.ParseDuration (`1m30s`, `500ms`, `5m0s`, `0`) in milliseconds: the form every
// upstream flag and config field takes for a duration. Undefined for anything else; callers
// raise their own error naming the field.

const UNITS: Record<string, number> = {
  ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000,
};

export function goDurationMs(text: string): number | undefined {
  if (text === '0') return 0;
  const re = /([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let pos = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    pos = re.lastIndex;
  }
  return pos === 0 || pos !== text.length ? undefined : total;
}
