// apimachinery pkg/util/duration.HumanDuration, as kubectl's AGE column prints it.

export function humanDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < -1) return '<invalid>';
  if (s < 0) return '0s';
  if (s < 60 * 2) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 60 * 3) return `${m}m`;
  const h = Math.floor(s / 3600);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (h < 24 * 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (h < 24 * 365 * 2) return `${Math.floor(h / 24)}d`;
  if (h < 24 * 365 * 8) {
    const dy = Math.floor(h / 24) % 365;
    return dy === 0 ? `${Math.floor(h / 24 / 365)}y` : `${Math.floor(h / 24 / 365)}y${dy}d`;
  }
  return `${Math.floor(h / 24 / 365)}y`;
}

/** Age of a timestamp at `now`, or `<unknown>` when unset. */
export function age(ts: string | undefined, now: Date): string {
  if (!ts) return '<unknown>';
  const t = Date.parse(ts);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now.getTime() - t);
}
