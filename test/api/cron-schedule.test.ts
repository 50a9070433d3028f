// Cron schedule parsing as upstream's (robfig/cron ParseStandard) with its error wording, the
// next-time arithmetic (descriptors, steps, names, day-of-month/day-of-week rule, time zones) and
// CronJob validation of schedule and timeZone.

import { describe, expect, it } from 'vitest';
import { parseCronSchedule, validateTimeZoneName } from '../../src/api/cron-schedule.js';
import { applyDefaults } from '../../src/api/defaults.js';
import { validate } from '../../src/api/validation/index.js';
import type { CronJob } from '../../src/api/types.js';

const err = (s: string) => { const r = parseCronSchedule(s); return r.ok ? 'ok' : r.error; };
const next = (s: string, from: string, tz?: string) => {
  const r = parseCronSchedule(s, tz);
  if (!r.ok) throw new Error(r.error);
  const n = r.schedule.next(Date.parse(from));
  return n === undefined ? undefined : new Date(n).toISOString();
};

describe('parsing', () => {
  it('accepts the standard forms', () => {
    for (const s of ['* * * * *', '*/5 * * * *', '0 0 * * 0', '15 2 1-15/2 jan-mar mon,wed,FRI', '? ? ? ? ?',
      '@hourly', '@daily', '@weekly', '@monthly', '@yearly', '@annually', '@midnight', '@every 1h30m', '5 4 * * sun']) {
      expect(err(s), s).toBe('ok');
    }
  });

  it("refuses bad input with robfig/cron's messages", () => {
    expect(err('')).toBe('empty spec string');
    expect(err('* * * *')).toBe('expected exactly 5 fields, found 4: [* * * *]');
    expect(err('0 0 * * * *')).toBe('expected exactly 5 fields, found 6: [0 0 * * * *]');
    expect(err('@fortnightly')).toBe('unrecognized descriptor: @fortnightly');
    expect(err('60 * * * *')).toBe('end of range (60) above maximum (59): 60');
    expect(err('* 24 * * *')).toBe('end of range (24) above maximum (23): 24');
    expect(err('* * 0 * *')).toBe('beginning of range (0) below minimum (1): 0');
    expect(err('* * * * 7')).toBe('end of range (7) above maximum (6): 7');
    expect(err('5-1 * * * *')).toBe('beginning of range (5) beyond end of range (1): 5-1');
    expect(err('*/0 * * * *')).toBe('step of range should be a positive number: */0');
    expect(err('1-2-3 * * * *')).toBe('too many hyphens: 1-2-3');
    expect(err('*/2/3 * * * *')).toBe('too many slashes: */2/3');
    expect(err('x * * * *')).toBe('failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax');
    expect(err('* * * foo *')).toBe('failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax');
  });
});

describe('next run', () => {
  it('steps, descriptors and names', () => {
    expect(next('*/1 * * * *', '2024-05-01T10:00:30Z', 'UTC')).toBe('2024-05-01T10:01:00.000Z');
    expect(next('*/15 * * * *', '2024-05-01T10:00:00Z', 'UTC')).toBe('2024-05-01T10:15:00.000Z');
    expect(next('@hourly', '2024-05-01T10:59:59Z', 'UTC')).toBe('2024-05-01T11:00:00.000Z');
    expect(next('@daily', '2024-05-01T10:00:00Z', 'UTC')).toBe('2024-05-02T00:00:00.000Z');
    expect(next('@weekly', '2024-05-01T10:00:00Z', 'UTC')).toBe('2024-05-05T00:00:00.000Z'); // a Sunday
    expect(next('@monthly', '2024-05-01T10:00:00Z', 'UTC')).toBe('2024-06-01T00:00:00.000Z');
    expect(next('@yearly', '2024-05-01T10:00:00Z', 'UTC')).toBe('2025-01-01T00:00:00.000Z');
    expect(next('30 9 * feb mon', '2024-05-01T10:00:00Z', 'UTC')).toBe('2025-02-03T09:30:00.000Z');
    expect(next('5/20 * * * *', '2024-05-01T10:06:00Z', 'UTC')).toBe('2024-05-01T10:25:00.000Z');
  });

  it('day of month OR day of week when both are restricted, AND when one is a star', () => {
    // 2024-05-01 is a Wednesday: "on the 15th or on Fridays".
    expect(next('0 0 15 * fri', '2024-05-01T10:00:00Z', 'UTC')).toBe('2024-05-03T00:00:00.000Z');
    expect(next('0 0 15 * *', '2024-05-01T10:00:00Z', 'UTC')).toBe('2024-05-15T00:00:00.000Z');
    expect(next('0 0 */1 * fri', '2024-05-01T10:00:00Z', 'UTC')).toBe('2024-05-03T00:00:00.000Z');
  });

  it('in a time zone (wall clock, across a DST change)', () => {
    // 09:00 in Berlin is 07:00Z in summer (CEST) and 08:00Z in winter (CET).
    expect(next('0 9 * * *', '2024-05-01T10:00:00Z', 'Europe/Berlin')).toBe('2024-05-02T07:00:00.000Z');
    expect(next('0 9 * * *', '2024-10-27T00:00:00Z', 'Europe/Berlin')).toBe('2024-10-27T08:00:00.000Z');
    expect(next('30 0 * * *', '2024-05-01T10:00:00Z', 'Asia/Kolkata')).toBe('2024-05-01T19:00:00.000Z');
  });
});

describe('CronJob validation', () => {
  const cj = (spec: Partial<NonNullable<CronJob['spec']>>, name = 'hello'): CronJob => applyDefaults({
    apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name, namespace: 'default' },
    spec: { schedule: '*/1 * * * *', jobTemplate: { spec: { template: { spec: {
      restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } } }, ...spec },
  } as CronJob);
  const msgs = (o: CronJob) => validate(o).map((c) => `${c.field}: ${c.message}`);

  it('defaults as upstream', () => {
    expect(cj({}).spec).toMatchObject({ concurrencyPolicy: 'Allow', suspend: false,
      successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });
  });

  it('reports schedule, time zone and name problems with upstream wording', () => {
    expect(msgs(cj({}))).toEqual([]);
    expect(msgs(cj({ schedule: '61 * * * *' })).join('\n')).toContain('spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61');
    expect(msgs(cj({ schedule: 'CRON_TZ=UTC 0 * * * *' })).join('\n'))
      .toContain('cannot use TZ or CRON_TZ in schedule, use timeZone field instead');
    expect(msgs(cj({ timeZone: 'Mars/Olympus' })).join('\n')).toContain('spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus');
    expect(msgs(cj({ timeZone: 'Local' })).join('\n')).toContain('timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones');
    expect(msgs(cj({ timeZone: 'Europe/Berlin' }))).toEqual([]);
    expect(msgs(cj({ concurrencyPolicy: 'Sometimes' as never })).join('\n')).toContain('spec.concurrencyPolicy: Unsupported value: "Sometimes"');
    expect(msgs(cj({}, 'x'.repeat(53))).join('\n')).toContain('must be no more than 52 characters');
    expect(validateTimeZoneName('')).toBe('timeZone must be nil or non-empty string');
    expect(validateTimeZoneName('europe/berlin')).toBe('unknown time zone europe/berlin');
  });
});
