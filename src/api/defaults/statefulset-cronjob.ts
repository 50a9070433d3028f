// StatefulSet (apps/v1) and CronJob (batch/v1) defaulting as upstream SetDefaults_StatefulSet /
// SetDefaults_CronJob (v1.33; MaxUnavailableStatefulSet is alpha and off, so
// rollingUpdate.maxUnavailable is not defaulted). A CronJob's jobTemplate.spec is not Job-
// defaulted (upstream defaults the Job object, not a JobSpec): only its pod template is.

import type { CronJob, StatefulSet } from '../types.js';
import { defaultPodTemplate } from './pod.js';

export function defaultStatefulSet(ss: StatefulSet): void {
  const s = ss.spec;
  if (!s) return;
  s.podManagementPolicy ??= 'OrderedReady';
  const st = (s.updateStrategy ??= {});
  st.type ??= 'RollingUpdate';
  if (st.type === 'RollingUpdate') {
    const ru = (st.rollingUpdate ??= {});
    ru.partition ??= 0;
  }
  const pvc = (s.persistentVolumeClaimRetentionPolicy ??= {});
  pvc.whenDeleted ??= 'Retain';
  pvc.whenScaled ??= 'Retain';
  s.replicas ??= 1;
  s.revisionHistoryLimit ??= 10;
  defaultPodTemplate(s.template);
}

export function defaultCronJob(cj: CronJob): void {
  const s = cj.spec;
  if (!s) return;
  s.concurrencyPolicy ??= 'Allow';
  s.suspend ??= false;
  s.successfulJobsHistoryLimit ??= 3;
  s.failedJobsHistoryLimit ??= 1;
  defaultPodTemplate(s.jobTemplate?.spec?.template);
}
