// The Job controller (NonIndexed jobs): keeps min(parallelism, completions - succeeded) pods
// active, counts succeeded/failed pods, fails the Job past backoffLimit (BackoffLimitExceeded,
// active pods deleted) and completes it when enough pods succeeded (SuccessCriteriaMet, then
// Complete, reason CompletionsReached). Without `completions`, the first success completes it
// once no pod is active. (Pod failure policies, indexed mode and back-off delays are not
// modelled.)

import type { Job, JobStatus, Pod, WorkloadCondition } from '../../api/types.js';
import { isKdpError } from '../../errors.js';
import { objectKey } from '../../client/cache.js';
import type { ControllerContext } from '../options.js';
import { inNs, JOBS, PODS } from '../refs.js';
import { buildQueueController } from '../runner.js';
import { buildExpectations } from '../expectations.js';
import { CONTROLLER_UID_INDEX, controllerUidIndex, slowStart } from '../replicaset/controller.js';
import { podFromTemplate } from '../replicaset/pods.js';
import { controllerRef, isoNow, isPodActive, isPodReady, type Controller } from '../util.js';

const cond = (type: string, reason: string, message: string, now: string): WorkloadCondition =>
  ({ type, status: 'True', lastProbeTime: now, lastTransitionTime: now, reason, message });

export function buildJobController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const jobInf = ctx.informers.informerFor<Job>(JOBS);
  const podInf = ctx.informers.informerFor<Pod>(PODS, {
    indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndex },
  });
  const recorder = ctx.recorder('job-controller');
  const exp = buildExpectations(5 * 60_000, options.now);
  const byUid = new Map<string, string>();
  const c = buildQueueController('job', options.workers, sync);
  jobInf.addEventHandler({
    onAdd: (j) => { byUid.set(j.metadata.uid!, objectKey(j)); c.queue.add(objectKey(j)); },
    onUpdate: (_, j) => c.queue.add(objectKey(j)),
    onDelete: (j) => { byUid.delete(j.metadata.uid!); exp.delete(objectKey(j)); },
  });
  const owner = (p: Pod) => {
    const r = controllerRef(p);
    return r?.kind === 'Job' ? byUid.get(r.uid) : undefined;
  };
  podInf.addEventHandler({
    onAdd: (p) => { const k = owner(p); if (k) { exp.creationObserved(k); c.queue.add(k); } },
    onUpdate: (_, p) => { const k = owner(p); if (k) c.queue.add(k); },
    onDelete: (p) => { const k = owner(p); if (k) { exp.deletionObserved(k); c.queue.add(k); } },
  });

  const finished = (s?: JobStatus) => (s?.conditions ?? []).some((x) =>
    (x.type === 'Complete' || x.type === 'Failed') && x.status === 'True');

  async function sync(key: string): Promise<void> {
    const job = jobInf.cache.get(key);
    if (!job || job.metadata.deletionTimestamp) return;
    const pods = podInf.cache.byIndex(CONTROLLER_UID_INDEX, job.metadata.uid!);
    const active = pods.filter(isPodActive);
    const succeeded = pods.filter((p) => p.status?.phase === 'Succeeded').length;
    const failed = Math.max(job.status?.failed ?? 0,
      pods.filter((p) => p.status?.phase === 'Failed').length);
    const now = isoNow(options.now());
    const spec = job.spec!;
    const status: JobStatus = {
      ...(job.status ?? {}), startTime: job.status?.startTime ?? now,
      active: active.length, succeeded, failed, ready: active.filter(isPodReady).length,
      terminating: pods.filter((p) => p.metadata.deletionTimestamp).length,
    };
    if (finished(job.status)) { await writeStatus(job, { ...status, active: 0 }); return; }
    const backoffLimit = spec.backoffLimit ?? 6;
    const parallelism = spec.suspend ? 0 : spec.parallelism ?? 1;
    const completions = spec.completions;
    if (failed > backoffLimit) {
      await Promise.all(active.map((p) => del(p)));
      const msg = 'Job has reached the specified backoff limit';
      status.conditions = [...(status.conditions ?? []),
        cond('FailureTarget', 'BackoffLimitExceeded', msg, now),
        cond('Failed', 'BackoffLimitExceeded', msg, now)];
      status.active = 0;
      recorder.event({ ...job, apiVersion: 'batch/v1', kind: 'Job' }, 'Warning',
        'BackoffLimitExceeded', msg);
      await writeStatus(job, status);
      return;
    }
    const done = completions === undefined ? succeeded > 0 && active.length === 0
      : succeeded >= completions;
    if (done) {
      await Promise.all(active.map((p) => del(p)));
      const msg = 'Reached expected number of succeeded pods';
      status.conditions = [...(status.conditions ?? []),
        cond('SuccessCriteriaMet', 'CompletionsReached', msg, now),
        cond('Complete', 'CompletionsReached', msg, now)];
      status.completionTime = now;
      status.active = 0;
      recorder.event({ ...job, apiVersion: 'batch/v1', kind: 'Job' }, 'Normal', 'Completed',
        'Job completed');
      await writeStatus(job, status);
      return;
    }
    const want = completions === undefined ? (succeeded > 0 ? 0 : parallelism)
      : Math.min(parallelism, completions - succeeded);
    if (exp.satisfied(key)) await manage(key, job, active, want);
    await writeStatus(job, status);
  }

  async function manage(key: string, job: Job, active: Pod[], want: number): Promise<void> {
    const diff = want - active.length;
    if (diff > 0) {
      exp.expect(key, diff, 0);
      await slowStart(diff, async () => {
        const pod = podFromTemplate(job.spec?.template, job, 'batch/v1', 'Job');
        pod.metadata.generateName = `${job.metadata.name}-`;
        try {
          const made = await client.create(inNs(PODS, job.metadata.namespace), pod);
          recorder.event({ ...job, apiVersion: 'batch/v1', kind: 'Job' }, 'Normal',
            'SuccessfulCreate', `Created pod: ${made.metadata.name}`);
        } catch (e) { exp.lower(key, 1, 0); throw e; }
      }, () => exp.lower(key, 1, 0));
    } else if (diff < 0) {
      const extra = active.slice(0, -diff);
      exp.expect(key, 0, extra.length);
      await Promise.all(extra.map((p) => del(p)));
    }
  }

  async function del(p: Pod): Promise<void> {
    try {
      await client.delete(inNs(PODS, p.metadata.namespace), p.metadata.name!);
    } catch (e) { if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e; }
  }

  async function writeStatus(job: Job, status: JobStatus): Promise<void> {
    if (JSON.stringify(status) === JSON.stringify(job.status ?? {})) return;
    try {
      await client.update(inNs(JOBS, job.metadata.namespace), { ...job, status },
        { subresource: 'status' });
    } catch (e) {
      if (isKdpError(e, 'KDP_CONFLICT')) { c.queue.addAfter(objectKey(job), 10); return; }
      if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
    }
  }

  return { name: 'job', start: c.start, stop: c.stop };
}
