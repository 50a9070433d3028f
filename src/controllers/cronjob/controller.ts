// The CronJob controller, as upstream's pkg/controller/cronjob (cronjob_controllerv2, v1.33):
// at each scheduled time (standard cron, descriptors, `timeZone`) it creates the Job
// `<cronjob>-<scheduled minutes since epoch>` from jobTemplate (owner reference, annotation
// `batch.kubernetes.io/cronjob-scheduled-timestamp`), honouring suspend, startingDeadlineSeconds
// (MissSchedule past it), concurrencyPolicy (Forbid skips while a Job runs: JobAlreadyActive;
// Replace deletes the running ones), keeps status.active/lastScheduleTime/lastSuccessfulTime
// and deletes finished Jobs beyond successfulJobsHistoryLimit/failedJobsHistoryLimit, oldest
// first. Events carry upstream's reasons and wording (SuccessfulCreate "Created job x",
// SawCompletedJob, SuccessfulDelete, UnexpectedJob, MissingJob, TooManyMissedTimes, ...).
//
// Time scale: the schedule runs on a virtual clock that equals the real clock when the controller
// starts and then runs 1/timeScale as fast (kdp up --time-scale 10 passes 0.1: a `*/1 * * * *`
// schedule fires every 6 real seconds). Job names carry the virtual minute; timestamps written to
// the API (lastScheduleTime, the scheduled-timestamp annotation) are the real moments.

import type { CronJob, CronJobStatus, Job } from '../../api/types.js';
import { parseCronSchedule, type CronSchedule } from '../../api/cron-schedule.js';
import { objectKey } from '../../client/cache.js';
import { isKdpError } from '../../errors.js';
import type { ControllerContext } from '../options.js';
import { inNs, JOBS } from '../refs.js';
import { CONTROLLER_UID_INDEX, controllerUidIndex } from '../replicaset/controller.js';
import { buildQueueController } from '../runner.js';
import { clone, controllerRef, type Controller } from '../util.js';

export const CRONJOBS = { group: 'batch', version: 'v1', resource: 'cronjobs' } as const;
export const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

/** Upstream's cap on missed start times it walks before warning. */
const MAX_MISSED = 100;

export function isJobFinished(j: Job): 'Complete' | 'Failed' | undefined {
  for (const c of j.status?.conditions ?? []) {
    if ((c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') return c.type;
  }
  return undefined;
}

/** Go's time.Format(RFC3339) of `ms` in `timeZone` (UTC when unset, as LoadLocation("")). */
export function rfc3339In(ms: number, timeZone: string | undefined): string {
  const utc = new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  if (!timeZone || timeZone === 'UTC') return utc;
  const f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric',
    month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    timeZoneName: 'longOffset' });
  const p: Record<string, string> = {};
  for (const x of f.formatToParts(ms)) p[x.type] = x.value;
  const off = (p.timeZoneName ?? 'GMT').replace('GMT', '') || 'Z';
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${off}`;
}

/** The virtual clock of a time-scaled controller (identity when scale is 1). */
export function virtualClock(epoch: number, scale: number) {
  return {
    toVirtual: (t: number) => (t <= epoch ? t : epoch + (t - epoch) / scale),
    toReal: (v: number) => (v <= epoch ? v : epoch + (v - epoch) * scale),
  };
}

export function buildCronJobController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const cjInf = ctx.informers.informerFor<CronJob>(CRONJOBS);
  const jobInf = ctx.informers.informerFor<Job>(JOBS, { indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndex } });
  const recorder = ctx.recorder('cronjob-controller');
  const clock = virtualClock(options.now(), options.timeScale);
  const byUid = new Map<string, string>();
  /** CronJob uid → the virtual time of the last run started. */
  const lastStarted = new Map<string, number>();
  const timers = new Map<string, { at: number; t: ReturnType<typeof setTimeout> }>();
  const c = buildQueueController('cronjob', options.workers, sync);
  let stopped = false;

  /** Requeues `key` at real time `at` (an earlier wake-up replaces a later one). */
  function wakeAt(key: string, at: number): void {
    const cur = timers.get(key);
    if (stopped || (cur && cur.at <= at)) return;
    if (cur) clearTimeout(cur.t);
    const t = setTimeout(() => { timers.delete(key); c.queue.add(key); }, Math.max(0, at - options.now()));
    t.unref?.();
    timers.set(key, { at, t });
  }
  const forget = (key: string) => { const cur = timers.get(key); if (cur) clearTimeout(cur.t); timers.delete(key); };

  cjInf.addEventHandler({
    onAdd: (j) => { byUid.set(j.metadata.uid!, objectKey(j)); c.queue.add(objectKey(j)); },
    onUpdate: (a, b) => {
      if (JSON.stringify(a.spec) !== JSON.stringify(b.spec)) forget(objectKey(b));
      c.queue.add(objectKey(b));
    },
    onDelete: (j) => { byUid.delete(j.metadata.uid!); lastStarted.delete(j.metadata.uid!); forget(objectKey(j)); },
  });
  const owner = (j: Job) => {
    const r = controllerRef(j);
    return r?.kind === 'CronJob' ? byUid.get(r.uid) : undefined;
  };
  const onJob = (j: Job) => { const k = owner(j); if (k) c.queue.add(k); };
  jobInf.addEventHandler({ onAdd: onJob, onUpdate: (_, j) => onJob(j), onDelete: onJob });

  const withKind = (cj: CronJob) => ({ ...cj, apiVersion: 'batch/v1', kind: 'CronJob' });

  async function deleteJob(cj: CronJob, j: Job): Promise<boolean> {
    try {
      await client.delete(inNs(JOBS, j.metadata.namespace), j.metadata.name!, { propagationPolicy: 'Background' });
    } catch (e) {
      if (isKdpError(e, 'KDP_NOT_FOUND')) return true;
      recorder.event(withKind(cj), 'Warning', 'FailedDelete', `Deleted job: ${(e as Error).message}`);
      return false;
    }
    recorder.event(withKind(cj), 'Normal', 'SuccessfulDelete', `Deleted job ${j.metadata.name}`);
    return true;
  }

  /** The most recent virtual schedule time in (earliest, now], and how many were missed. */
  function mostRecent(sched: CronSchedule, earliest: number, now: number): { t?: number; missed: number } {
    let t: number | undefined;
    let missed = 0;
    for (let x = sched.next(earliest); x !== undefined && x <= now; x = sched.next(x)) {
      t = x;
      missed++;
      if (missed > MAX_MISSED * 10) {
        // Far behind: jump close to now rather than walking every minute of a long gap.
        const back = sched.next(now - 2 * 366 * 86_400_000);
        if (back === undefined || back <= x) break;
        let y = back;
        for (let z = sched.next(y); z !== undefined && z <= now; z = sched.next(z)) y = z;
        t = y;
        break;
      }
    }
    return { t, missed };
  }

  async function sync(key: string): Promise<void> {
    const cj = cjInf.cache.get(key);
    if (!cj) return;
    const spec = cj.spec!;
    const ns = cj.metadata.namespace;
    const jobs = jobInf.cache.byIndex(CONTROLLER_UID_INDEX, cj.metadata.uid!);
    let status: CronJobStatus = clone(cj.status ?? {});
    let active = [...(status.active ?? [])];
    const inActive = (uid?: string) => active.some((a) => a.uid === uid);
    // Our cache may predate the status write that listed a Job we just created: re-read the
    // CronJob before calling a Job unexpected (as upstream does).
    if (jobs.some((j) => !inActive(j.metadata.uid) && !isJobFinished(j))) {
      const fresh = await client.get<CronJob>(inNs(CRONJOBS, ns), cj.metadata.name!).catch(() => undefined);
      if (fresh?.metadata.uid === cj.metadata.uid) {
        status = clone(fresh!.status ?? {});
        active = [...(status.active ?? [])];
      }
    }

    // Reconcile the active list with the Jobs we own.
    for (const j of jobs) {
      const done = isJobFinished(j);
      if (!inActive(j.metadata.uid) && !done) {
        recorder.event(withKind(cj), 'Warning', 'UnexpectedJob',
          `Saw a job that the controller did not create or forgot: ${j.metadata.name}`);
      } else if (inActive(j.metadata.uid) && done) {
        active = active.filter((a) => a.uid !== j.metadata.uid);
        recorder.event(withKind(cj), 'Normal', 'SawCompletedJob',
          `Saw completed job: ${j.metadata.name}, condition: ${done}`);
      }
      if (done === 'Complete' && j.status?.completionTime) {
        const ct = j.status.completionTime;
        if (!status.lastSuccessfulTime || Date.parse(ct) > Date.parse(status.lastSuccessfulTime)) {
          status.lastSuccessfulTime = ct;
        }
      }
    }
    for (const a of [...active]) {
      if (jobs.some((j) => j.metadata.uid === a.uid)) continue;
      try {
        await client.get(inNs(JOBS, ns), a.name!);
      } catch (e) {
        if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
        recorder.event(withKind(cj), 'Normal', 'MissingJob', `Active job went missing: ${a.name}`);
        active = active.filter((x) => x.uid !== a.uid);
      }
    }

    if (!cj.metadata.deletionTimestamp) await schedule(key, cj, jobs, active, status);

    // History limits (upstream cleanupFinishedJobs), oldest start first.
    const byStart = (a: Job, b: Job) => Date.parse(a.status?.startTime ?? a.metadata.creationTimestamp ?? '') -
      Date.parse(b.status?.startTime ?? b.metadata.creationTimestamp ?? '');
    for (const [kind, limit] of [['Complete', spec.successfulJobsHistoryLimit], ['Failed', spec.failedJobsHistoryLimit]] as const) {
      if (limit === undefined) continue;
      const done = jobInf.cache.byIndex(CONTROLLER_UID_INDEX, cj.metadata.uid!)
        .filter((j) => isJobFinished(j) === kind && !j.metadata.deletionTimestamp).sort(byStart);
      for (const j of done.slice(0, Math.max(0, done.length - limit))) await deleteJob(cj, j);
    }

    status.active = active;
    const next = { ...status, active: active.length ? active : undefined };
    const before = { ...(cj.status ?? {}), active: cj.status?.active?.length ? cj.status.active : undefined };
    if (JSON.stringify(sortKeys(next)) !== JSON.stringify(sortKeys(before))) {
      await client.patch(inNs(CRONJOBS, ns), cj.metadata.name!, 'merge', { status: {
        active: next.active ?? null, lastScheduleTime: next.lastScheduleTime ?? null,
        lastSuccessfulTime: next.lastSuccessfulTime ?? null,
      } }, { subresource: 'status' }).catch((e) => { if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e; });
    }
  }

  /** Upstream syncCronJob's scheduling half: mutates `active` and `status`. */
  async function schedule(key: string, cj: CronJob, jobs: Job[], active: NonNullable<CronJobStatus['active']>,
    status: CronJobStatus): Promise<void> {
    const spec = cj.spec!;
    const parsed = parseCronSchedule(spec.schedule, spec.timeZone);
    if (!parsed.ok) {
      recorder.event(withKind(cj), 'Warning', 'UnparseableSchedule',
        `unparseable schedule: ${JSON.stringify(spec.schedule)} : ${parsed.error}`);
      return;
    }
    if (spec.suspend) return;
    const sched = parsed.schedule;
    const nowV = clock.toVirtual(options.now());
    // The last schedule time written is a real moment truncated to seconds, coarser than a virtual
    // minute when time is scaled: the virtual minute last started (remembered, or read from the
    // names of the Jobs we own) is the precise bound; the written time is the fallback.
    let earliest = clock.toVirtual(Date.parse(cj.metadata.creationTimestamp ?? '') || options.now());
    if (status.lastScheduleTime) {
      earliest = clock.toVirtual(Date.parse(status.lastScheduleTime));
      const prefix = `${cj.metadata.name}-`;
      for (const j of jobs) {
        const n = j.metadata.name!.startsWith(prefix) ? Number(j.metadata.name!.slice(prefix.length)) : NaN;
        if (Number.isInteger(n)) earliest = Math.max(earliest, n * 60_000);
      }
      const mem = lastStarted.get(cj.metadata.uid!);
      if (mem !== undefined) earliest = Math.max(earliest, mem);
    }
    const sds = spec.startingDeadlineSeconds;
    if (sds !== undefined) earliest = Math.max(earliest, nowV - sds * 1000);
    const requeue = (after: number) => {
      const n = sched.next(after);
      if (n !== undefined) wakeAt(key, clock.toReal(n) + 100);
    };
    if (earliest > nowV) { requeue(nowV); return; }
    const { t: scheduled, missed } = mostRecent(sched, earliest, nowV);
    if (missed > MAX_MISSED) {
      recorder.event(withKind(cj), 'Warning', 'TooManyMissedTimes',
        'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew');
    }
    if (scheduled === undefined) { requeue(nowV); return; }
    const realScheduled = clock.toReal(scheduled);
    if (sds !== undefined && scheduled + sds * 1000 < nowV) {
      recorder.event(withKind(cj), 'Warning', 'MissSchedule',
        `Missed scheduled time to start a job: ${new Date(realScheduled).toUTCString().replace('GMT', '+0000')}`);
      requeue(nowV);
      return;
    }
    const name = `${cj.metadata.name}-${Math.floor(scheduled / 60_000)}`;
    if (active.some((a) => a.name === name) || jobs.some((j) => j.metadata.name === name)) {
      requeue(nowV);
      return;
    }
    if (spec.concurrencyPolicy === 'Forbid' && active.length > 0) {
      recorder.event(withKind(cj), 'Normal', 'JobAlreadyActive',
        'Not starting job because prior execution is running and concurrency policy is Forbid');
      requeue(nowV);
      return;
    }
    if (spec.concurrencyPolicy === 'Replace') {
      for (const a of [...active]) {
        const j = jobs.find((x) => x.metadata.uid === a.uid);
        if (!j) continue;
        if (await deleteJob(cj, j)) active.splice(active.indexOf(a), 1);
      }
    }
    const tmpl = spec.jobTemplate ?? {};
    const job: Job = {
      apiVersion: 'batch/v1', kind: 'Job',
      metadata: {
        name, namespace: cj.metadata.namespace,
        labels: { ...(tmpl.metadata?.labels ?? {}) },
        annotations: { ...(tmpl.metadata?.annotations ?? {}),
          [SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339In(realScheduled, spec.timeZone) },
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: cj.metadata.name!,
          uid: cj.metadata.uid!, controller: true, blockOwnerDeletion: true }],
      },
      spec: clone(tmpl.spec!),
    };
    let made: Job;
    try {
      made = await client.create<Job>(inNs(JOBS, cj.metadata.namespace), job);
    } catch (e) {
      if (isKdpError(e, 'KDP_ALREADY_EXISTS')) { requeue(nowV); return; }
      recorder.event(withKind(cj), 'Warning', 'FailedCreate', `Error creating job: ${(e as Error).message}`);
      throw e;
    }
    recorder.event(withKind(cj), 'Normal', 'SuccessfulCreate', `Created job ${made.metadata.name}`);
    active.push({ kind: 'Job', namespace: made.metadata.namespace, name: made.metadata.name,
      uid: made.metadata.uid, apiVersion: 'batch/v1', resourceVersion: made.metadata.resourceVersion });
    lastStarted.set(cj.metadata.uid!, scheduled);
    status.lastScheduleTime = new Date(Math.floor(realScheduled / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    requeue(nowV);
  }

  return {
    name: 'cronjob',
    start: c.start,
    stop() { stopped = true; for (const k of [...timers.keys()]) forget(k); return c.stop(); },
  };
}

function sortKeys(o: object): unknown {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined).sort(([a], [b]) => a.localeCompare(b)));
}
