// Workload defaulting as upstream apps/v1 and batch/v1 SetDefaults_* (v1.33).

import type { DaemonSet, Deployment, Job, ReplicaSet } from '../types.js';
import { defaultPodTemplate } from './pod.js';

export function defaultDeployment(d: Deployment): void {
  const s = d.spec;
  if (!s) return;
  s.replicas ??= 1;
  const st = (s.strategy ??= {});
  st.type ??= 'RollingUpdate';
  if (st.type === 'RollingUpdate') {
    const ru = (st.rollingUpdate ??= {});
    ru.maxUnavailable ??= '25%';
    ru.maxSurge ??= '25%';
  }
  s.revisionHistoryLimit ??= 10;
  s.progressDeadlineSeconds ??= 600;
  defaultPodTemplate(s.template);
}

export function defaultReplicaSet(rs: ReplicaSet): void {
  const s = rs.spec;
  if (!s) return;
  s.replicas ??= 1;
  defaultPodTemplate(s.template);
}

export function defaultDaemonSet(ds: DaemonSet): void {
  const s = ds.spec;
  if (!s) return;
  const st = (s.updateStrategy ??= {});
  st.type ??= 'RollingUpdate';
  if (st.type === 'RollingUpdate') {
    const ru = (st.rollingUpdate ??= {});
    ru.maxUnavailable ??= 1;
    ru.maxSurge ??= 0;
  }
  s.revisionHistoryLimit ??= 10;
  defaultPodTemplate(s.template);
}

const MAX_INT32 = 2147483647;

export function defaultJob(j: Job): void {
  const s = j.spec;
  if (!s) return;
  if (s.completions === undefined && s.parallelism === undefined) s.completions = 1;
  s.parallelism ??= 1;
  s.backoffLimit ??= s.backoffLimitPerIndex === undefined ? 6 : MAX_INT32;
  s.completionMode ??= 'NonIndexed';
  s.suspend ??= false;
  s.podReplacementPolicy ??= s.podFailurePolicy ? 'Failed' : 'TerminatingOrFailed';
  defaultPodTemplate(s.template);
}

/** Job labels upstream adds to generated selectors and pod templates. */
export const JOB_LABELS = {
  controllerUid: 'batch.kubernetes.io/controller-uid',
  legacyControllerUid: 'controller-uid',
  jobName: 'batch.kubernetes.io/job-name',
  legacyJobName: 'job-name',
} as const;

/**
 * Create-time strategy for Jobs (upstream jobStrategy.PrepareForCreate → generateSelector):
 * unless `manualSelector` is true, labels the template with the job name and uid and selects on
 * the uid. Needs `metadata.uid` and `metadata.name` set (the API server assigns them first).
 */
export function generateJobSelector(j: Job): void {
  const s = j.spec;
  if (!s || s.manualSelector === true) return;
  const name = j.metadata.name ?? '';
  const uid = j.metadata.uid ?? '';
  // Go's template is a struct, never absent: an unset one is labelled like any other.
  const meta = ((s.template ??= {}).metadata ??= {});
  const labels = (meta.labels ??= {});
  labels[JOB_LABELS.legacyJobName] ??= name;
  labels[JOB_LABELS.jobName] ??= name;
  labels[JOB_LABELS.legacyControllerUid] ??= uid;
  labels[JOB_LABELS.controllerUid] ??= uid;
  const sel = (s.selector ??= {});
  const ml = (sel.matchLabels ??= {});
  ml[JOB_LABELS.controllerUid] ??= uid;
}
