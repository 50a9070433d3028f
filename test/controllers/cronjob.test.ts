// The CronJob controller as upstream's, on a time-scaled virtual cluster (timeScale 0.01: the
// schedule's clock runs 100× fast, a `*/1 * * * *` schedule fires every 0.6 s): Jobs named
// `<cronjob>-<scheduled minute>` with the scheduled-timestamp annotation, history limits,
// concurrencyPolicy Forbid and Replace, suspend, status and events.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CronJob, Job } from '../../src/api/types.js';
import type { KubeObject } from '../../src/client/types.js';
import { isJobFinished, rfc3339In, virtualClock } from '../../src/controllers/cronjob/controller.js';
import { listItems, ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

const CJ = ref('cronjobs', 'default', 'batch');
const JOBS = ref('jobs', 'default', 'batch');

function cronJob(name: string, spec: Partial<NonNullable<CronJob['spec']>> = {}, ann: Record<string, string> = {}): CronJob {
  return { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name, namespace: 'default' },
    spec: { schedule: '*/1 * * * *', jobTemplate: { metadata: { labels: { cron: name } }, spec: { backoffLimit: 0,
      template: { metadata: { annotations: ann }, spec: { restartPolicy: 'Never',
        containers: [{ name: 'c', image: 'busybox' }] } } } }, ...spec } } as CronJob;
}

describe('helpers', () => {
  it('the virtual clock is the identity at scale 1 and runs 1/scale as fast after its epoch', () => {
    const v = virtualClock(1000, 1);
    expect(v.toVirtual(5000)).toBe(5000);
    const f = virtualClock(1000, 0.1);
    expect(f.toVirtual(2000)).toBe(11_000);
    expect(f.toReal(11_000)).toBe(2000);
    expect(f.toVirtual(500)).toBe(500);
  });
  it('formats the scheduled timestamp as Go RFC3339 in the zone', () => {
    const t = Date.parse('2024-05-01T07:00:00Z');
    expect(rfc3339In(t, undefined)).toBe('2024-05-01T07:00:00Z');
    expect(rfc3339In(t, 'Europe/Berlin')).toBe('2024-05-01T09:00:00+02:00');
  });
});

describe('CronJob controller on a cluster', () => {
  let c: TestCluster;
  beforeAll(async () => { c = await startTestCluster({ timeScale: 0.01, nodes: ['n1'] }); });
  afterAll(async () => { await c?.close(); });

  const jobs = async (name: string) => (await listItems<Job>(c.client, JOBS, `cron=${name}`))
    .filter((j) => !j.metadata.deletionTimestamp);
  const events = async () => listItems<KubeObject & { reason: string; message: string;
    involvedObject: { name: string } }>(c.client, ref('events', 'default'));

  it('fires on schedule and keeps 3 successful Jobs', async () => {
    await c.client.create(CJ, cronJob('tick', {}, { 'kdp.io/virtual-run-seconds': '1' }));
    const createdNames = async () => (await events()).filter((e) => e.involvedObject.name === 'tick'
      && e.reason === 'SuccessfulCreate').map((e) => e.message.replace('Created job ', ''));
    const created = await waitFor(async () => { const n = await createdNames(); return n.length >= 6 ? n : undefined; },
      30_000, 'six jobs');
    // One Job per virtual minute. (A sync delayed past the next minute starts only the most recent
    // missed run, as upstream; allow one such skip on a loaded machine.)
    const minutes = created.map((n) => Number(n.slice('tick-'.length))).sort((a, b) => a - b);
    const gaps = minutes.slice(1).map((m, i) => m - minutes[i]!);
    expect(gaps.every((g) => g >= 1)).toBe(true);
    expect(gaps.filter((g) => g === 1).length).toBeGreaterThanOrEqual(gaps.length - 1);
    const js = await jobs('tick');
    const j = js[0]!;
    expect(j.metadata.name).toMatch(/^tick-\d+$/);
    expect(j.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'CronJob', name: 'tick', controller: true });
    expect(j.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // History: at most 3 complete Jobs stay (plus a running one).
    await waitFor(async () => {
      const done = (await jobs('tick')).filter((x) => isJobFinished(x) === 'Complete');
      return done.length === 3;
    }, 20_000, 'three complete');
    const st = (await c.client.get<CronJob>(CJ, 'tick')).status!;
    expect(st.lastScheduleTime).toMatch(/Z$/);
    expect(st.lastSuccessfulTime).toMatch(/Z$/);
    const ev = (await events()).filter((e) => e.involvedObject.name === 'tick');
    expect(ev.some((e) => e.reason === 'SuccessfulCreate' && /^Created job tick-\d+$/.test(e.message))).toBe(true);
    expect(ev.some((e) => e.reason === 'SawCompletedJob')).toBe(true);
    expect(ev.some((e) => e.reason === 'SuccessfulDelete' && /^Deleted job tick-\d+$/.test(e.message))).toBe(true);
    expect(ev.some((e) => e.reason === 'UnexpectedJob')).toBe(false);
    await c.client.patch(CJ, 'tick', 'merge', { spec: { suspend: true } });
  });

  it('keeps 1 failed Job', async () => {
    await c.client.create(CJ, cronJob('fail', {}, { 'kdp.io/virtual-run-seconds': '1', 'kdp.io/virtual-exit-code': '1' }));
    const seen = new Set<string>();
    await waitFor(async () => {
      const js = await jobs('fail');
      for (const j of js) if (isJobFinished(j) === 'Failed') seen.add(j.metadata.name!);
      return seen.size >= 3 && js.filter((j) => isJobFinished(j) === 'Failed').length === 1;
    }, 30_000, 'failed history of one');
    await c.client.patch(CJ, 'fail', 'merge', { spec: { suspend: true } });
  });

  it('concurrencyPolicy Forbid starts nothing while a Job runs', async () => {
    await c.client.create(CJ, cronJob('solo', { concurrencyPolicy: 'Forbid' }, { 'kdp.io/virtual-run-seconds': '100000' }));
    await waitFor(async () => (await events()).some((e) => e.involvedObject.name === 'solo' && e.reason === 'JobAlreadyActive'
      && e.message === 'Not starting job because prior execution is running and concurrency policy is Forbid'),
    30_000, 'JobAlreadyActive');
    await new Promise((r) => setTimeout(r, 1500)); // two more virtual minutes
    expect((await jobs('solo')).length).toBe(1);
    expect((await c.client.get<CronJob>(CJ, 'solo')).status?.active?.length).toBe(1);
    await c.client.patch(CJ, 'solo', 'merge', { spec: { suspend: true } });
  });

  it('concurrencyPolicy Replace deletes the running Job for the new one', async () => {
    await c.client.create(CJ, cronJob('swap', { concurrencyPolicy: 'Replace' }, { 'kdp.io/virtual-run-seconds': '100000' }));
    const names = new Set<string>();
    await waitFor(async () => {
      const js = await jobs('swap');
      for (const j of js) names.add(j.metadata.name!);
      return names.size >= 3;
    }, 30_000, 'three jobs in turn');
    await waitFor(async () => (await jobs('swap')).length === 1, 20_000, 'one at a time');
    await c.client.patch(CJ, 'swap', 'merge', { spec: { suspend: true } });
  });

  it('startingDeadlineSeconds: a run whose start comes later than the deadline never starts', async () => {
    // Each wake-up comes 100 ms real = 10 s virtual after the minute: past a 5 s deadline, so the
    // window (now - 5 s, now] holds no scheduled time, as upstream computes it.
    await c.client.create(CJ, cronJob('late', { startingDeadlineSeconds: 5 }));
    await new Promise((r) => setTimeout(r, 1500));
    expect(await jobs('late')).toEqual([]);
    await c.client.patch(CJ, 'late', 'merge', { spec: { startingDeadlineSeconds: 600 } });
    await waitFor(async () => (await jobs('late')).length > 0, 20_000, 'a job within a 600 s deadline');
    await c.client.patch(CJ, 'late', 'merge', { spec: { suspend: true } });
  });

  it('deleting a CronJob garbage-collects its Jobs', async () => {
    expect((await jobs('tick')).length).toBeGreaterThan(0);
    await c.client.delete(CJ, 'tick');
    await waitFor(async () => (await jobs('tick')).length === 0, 30_000, 'jobs gone');
  });

  it('a suspended CronJob creates nothing', async () => {
    await c.client.create(CJ, cronJob('idle', { suspend: true }));
    await new Promise((r) => setTimeout(r, 1500));
    expect(await jobs('idle')).toEqual([]);
  });
});
