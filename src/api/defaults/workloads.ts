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
