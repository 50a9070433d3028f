// Cron schedules as upstream's CronJob controller reads them (robfig/cron v3 ParseStandard):
// five fields (minute hour day-of-month month day-of-week) with `*`, `?`, lists, ranges,
// steps and month/day names, or a descriptor (@yearly @annually @monthly @weekly @daily
// @midnight @hourly, @every <duration>). Errors carry robfig's wording, which upstream's
// validation returns as is. Day-of-month and day-of-week combine as robfig does: AND when either
// is a star, OR otherwise. `next` evaluates wall-clock fields in an IANA time zone via Intl.

export interface CronSchedule {
  /** The first matching minute strictly after `t` (ms since epoch), or undefined (none in 5 years). */
  next(t: number): number | undefined;
}

interface Bounds { min: number; max: number; names?: Record<string, number> }
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const B: Bounds[] = [
  { min: 0, max: 59 }, { min: 0, max: 23 }, { min: 1, max: 31 },
  { min: 1, max: 12, names: Object.fromEntries(MONTHS.map((m, i) => [m, i + 1])) },
  { min: 0, max: 6, names: Object.fromEntries(DAYS.map((d, i) => [d, i])) },
];

class CronError extends Error {}

function atoi(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) {
    throw new CronError(`failed to parse int from ${s}: strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
  }
  const n = Number(s);
  if (n < 0) throw new CronError(`negative number (${n}) not allowed: ${s}`);
  return n;
}

function intOrName(s: string, b: Bounds): number {
  const n = b.names?.[s.toLowerCase()];
  return n !== undefined ? n : atoi(s);
}

/** One field: the set of allowed values and whether it was a star (`*`/`?` with step 1). */
function field(expr: string, b: Bounds): { set: Set<number>; star: boolean } {
  const set = new Set<number>();
  let star = false;
  for (const part of expr.split(',')) {
    const rs = part.split('/');
    const lh = rs[0]!.split('-');
    let start: number; let end: number; let extra = false;
    if (lh[0] === '*' || lh[0] === '?') { start = b.min; end = b.max; extra = true; } else {
      start = intOrName(lh[0]!, b);
      if (lh.length === 1) end = start;
      else if (lh.length === 2) end = intOrName(lh[1]!, b);
      else throw new CronError(`too many hyphens: ${part}`);
    }
    let step = 1;
    if (rs.length === 2) {
      step = atoi(rs[1]!);
      if (lh.length === 1) end = b.max;
      if (step > 1) extra = false;
    } else if (rs.length > 2) throw new CronError(`too many slashes: ${part}`);
    if (start < b.min) throw new CronError(`beginning of range (${start}) below minimum (${b.min}): ${part}`);
    if (end > b.max) throw new CronError(`end of range (${end}) above maximum (${b.max}): ${part}`);
    if (start > end) throw new CronError(`beginning of range (${start}) beyond end of range (${end}): ${part}`);
    if (step === 0) throw new CronError(`step of range should be a positive number: ${part}`);
    for (let v = start; v <= end; v += step) set.add(v);
    star ||= extra;
  }
  return { set, star };
}

const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *', '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0', '@daily': '0 0 * * *', '@midnight': '0 0 * * *', '@hourly': '0 * * * *',
};

/** Go's time.ParseDuration for the units @every accepts in practice (h, m, s, ms). */
function goDuration(s: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/y;
  let ms = 0; let pos = 0;
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 1e-3, 'µs': 1e-3, ns: 1e-6 };
  if (!s) return undefined;
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) return undefined;
    ms += Number(m[1]) * units[m[2]!]!;
    pos = re.lastIndex;
  }
  return ms;
}

type Parsed = { ok: true; schedule: CronSchedule } | { ok: false; error: string };

/** Parses `spec` (no time zone: `timeZone` is a separate field; CRON_TZ= is refused by validation). */
export function parseCronSchedule(spec: string, timeZone?: string): Parsed {
  try {
    return { ok: true, schedule: parse(spec, timeZone) };
  } catch (e) {
    if (e instanceof CronError) return { ok: false, error: e.message };
    throw e;
  }
}

function parse(spec: string, timeZone: string | undefined): CronSchedule {
  if (spec.length === 0) throw new CronError('empty spec string');
  let body = spec;
  const tz = /^(?:CRON_)?TZ=(\S*)\s*/.exec(body);
  if (tz) {
    if (!validZone(tz[1]!)) throw new CronError(`provided bad location ${tz[1]}: unknown time zone ${tz[1]}`);
    timeZone = tz[1];
    body = body.slice(tz[0].length);
  }
  if (body.startsWith('@')) {
    if (body.startsWith('@every ')) {
      const d = goDuration(body.slice(7));
      if (d === undefined) throw new CronError(`failed to parse duration ${body}: time: invalid duration ${JSON.stringify(body.slice(7))}`);
      const every = Math.max(1000, Math.floor(d / 1000) * 1000);
      return { next: (t) => Math.floor(t / 1000) * 1000 + every };
    }
    const d = DESCRIPTORS[body];
    if (!d) throw new CronError(`unrecognized descriptor: ${body}`);
    body = d;
  }
  const fields = body.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5) {
    throw new CronError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  }
  const [mi, h, dom, mo, dow] = fields.map((f, i) => field(f, B[i]!));
  return cronSchedule(mi!, h!, dom!, mo!, dow!, timeZone);
}

type F = { set: Set<number>; star: boolean };

function cronSchedule(mi: F, h: F, dom: F, mo: F, dow: F, timeZone: string | undefined): CronSchedule {
  const wall = wallClock(timeZone);
  const dayOk = (w: Wall) => {
    const a = dom.set.has(w.day); const b = dow.set.has(w.weekday);
    return dom.star || dow.star ? a && b : a || b;
  };
  return {
    next(t) {
      let x = Math.floor(t / 60_000) * 60_000 + 60_000;
      const limit = t + 5 * 366 * 86_400_000;
      while (x <= limit) {
        const w = wall(x);
        if (!mo.set.has(w.month) || !dayOk(w)) { x += ((24 - w.hour) * 60 - w.minute) * 60_000; continue; }
        if (!h.set.has(w.hour)) { x += (60 - w.minute) * 60_000; continue; }
        if (!mi.set.has(w.minute)) { x += 60_000; continue; }
        return x;
      }
      return undefined;
    },
  };
}

interface Wall { month: number; day: number; weekday: number; hour: number; minute: number }

const WEEKDAY: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

function wallClock(timeZone: string | undefined): (t: number) => Wall {
  if (timeZone === 'UTC') {
    return (t) => { const d = new Date(t); return { month: d.getUTCMonth() + 1, day: d.getUTCDate(),
      weekday: d.getUTCDay(), hour: d.getUTCHours(), minute: d.getUTCMinutes() }; };
  }
  if (timeZone === undefined) {
    return (t) => { const d = new Date(t); return { month: d.getMonth() + 1, day: d.getDate(),
      weekday: d.getDay(), hour: d.getHours(), minute: d.getMinutes() }; };
  }
  const fmt = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', month: 'numeric',
    day: 'numeric', weekday: 'short', hour: 'numeric', minute: 'numeric' });
  return (t) => {
    const p: Record<string, string> = {};
    for (const part of fmt.formatToParts(t)) p[part.type] = part.value;
    return { month: Number(p.month), day: Number(p.day), weekday: WEEKDAY[p.weekday!] ?? 0,
      hour: Number(p.hour) % 24, minute: Number(p.minute) };
  };
}

function validZone(z: string): boolean {
  if (z === 'UTC' || z === 'Local') return true;
  try {
    const r = new Intl.DateTimeFormat('en-US', { timeZone: z }).resolvedOptions().timeZone;
    // Go's LoadLocation is case-sensitive; Intl is not.
    return !(r.toLowerCase() === z.toLowerCase() && r !== z);
  } catch { return false; }
}

const TZ_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

/** Upstream validateTimeZone: the message for a bad `spec.timeZone`, or undefined. */
export function validateTimeZoneName(z: string): string | undefined {
  if (z.length === 0) return 'timeZone must be nil or non-empty string';
  for (const part of z.split('/')) {
    if (part === '.' || part === '..' || part.startsWith('-') || !TZ_PART.test(part)) return `unknown time zone ${z}`;
  }
  if (z.toLowerCase() === 'local') {
    return 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones';
  }
  if (!validZone(z)) return `unknown time zone ${z}`;
  return undefined;
}
