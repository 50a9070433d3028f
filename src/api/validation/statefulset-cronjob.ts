// StatefulSet (apps/v1) and CronJob (batch/v1) validation as upstream (v1.33) with its field
// paths and messages. kdp has no PersistentVolumeClaims yet, so a StatefulSet with
// volumeClaimTemplates is refused (Forbidden, naming the field) rather than stored with pods that
// could never mount their claims.

import type {
  ControllerRevision, CronJob, LabelSelector, PodTemplateSpec, StatefulSet,
} from '../types.js';
import { labelSelectorMatcher } from '../selectors.js';
import { isKdpError } from '../../errors.js';
import { parseCronSchedule, validateTimeZoneName } from '../cron-schedule.js';
import { type Cause, forbidden, invalid, notSupported, required } from './field-errors.js';
import {
  deepEqual, nameIsDNSSubdomain, nonNegative, validateLabelSelector, validateObjectMeta,
  validateObjectMetaUpdate, validateImmutable,
} from './common.js';
import { validatePodTemplateSpec } from './pod.js';

const META = { namespaced: true, nameFn: nameIsDNSSubdomain };

function selectorAndTemplate(sel: LabelSelector | undefined, t: PodTemplateSpec | undefined,
  what: string): Cause[] {
  const out: Cause[] = [];
  if (!sel) out.push(required('spec.selector', ''));
  else {
    out.push(...validateLabelSelector(sel, 'spec.selector'));
    const n = Object.keys(sel.matchLabels ?? {}).length + (sel.matchExpressions?.length ?? 0);
    if (n === 0) out.push(invalid('spec.selector', sel, `empty selector is invalid for ${what}`));
    else {
      let ok = true;
      try { ok = labelSelectorMatcher(sel).matches(t?.metadata?.labels); } catch (e) {
        if (!isKdpError(e)) throw e;
      }
      if (!ok) out.push(invalid('spec.template.metadata.labels', t?.metadata?.labels ?? {},
        '`selector` does not match template `labels`'));
    }
  }
  return out;
}

export function validateStatefulSet(ss: StatefulSet): Cause[] {
  const out = validateObjectMeta(ss.metadata, META);
  const s = ss.spec;
  if (!s) return [...out, required('spec', '')];
  const pmp = s.podManagementPolicy;
  if (!pmp) out.push(required('spec.podManagementPolicy', ''));
  else if (pmp !== 'OrderedReady' && pmp !== 'Parallel') {
    out.push(invalid('spec.podManagementPolicy', pmp,
      'must be \'OrderedReady\' or \'Parallel\''));
  }
  const st = s.updateStrategy ?? {};
  if (!st.type) out.push(required('spec.updateStrategy', ''));
  else if (st.type === 'OnDelete') {
    if (st.rollingUpdate) out.push(invalid('spec.updateStrategy.rollingUpdate', st.rollingUpdate,
      "only allowed for updateStrategy 'RollingUpdate'"));
  } else if (st.type === 'RollingUpdate') {
    out.push(...nonNegative(st.rollingUpdate?.partition, 'spec.updateStrategy.rollingUpdate.partition'));
  } else {
    out.push(invalid('spec.updateStrategy', st, "must be 'RollingUpdate' or 'OnDelete'"));
  }
  out.push(...nonNegative(s.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  out.push(...nonNegative(s.replicas, 'spec.replicas'));
  out.push(...nonNegative(s.ordinals?.start, 'spec.ordinals.start'));
  out.push(...nonNegative(s.minReadySeconds, 'spec.minReadySeconds'));
  out.push(...selectorAndTemplate(s.selector, s.template, 'statefulset'));
  out.push(...validatePodTemplateSpec(s.template, 'spec.template'));
  const rp = s.template?.spec?.restartPolicy;
  if (rp && rp !== 'Always') {
    out.push(notSupported('spec.template.spec.restartPolicy', rp, ['Always']));
  }
  if (s.template?.spec?.activeDeadlineSeconds !== undefined) {
    out.push(forbidden('spec.template.spec.activeDeadlineSeconds',
      'activeDeadlineSeconds in StatefulSet is not Supported'));
  }
  if ((s.volumeClaimTemplates?.length ?? 0) > 0) {
    out.push(forbidden('spec.volumeClaimTemplates',
      'kdp has no PersistentVolumeClaims: volumeClaimTemplates are not supported yet ' +
      '(use emptyDir or hostPath volumes in the pod template)'));
  }
  return out;
}

const MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit',
  'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'] as const;

export function validateStatefulSetUpdate(ss: StatefulSet, old: StatefulSet): Cause[] {
  const out = [...validateObjectMetaUpdate(ss.metadata, old.metadata), ...validateStatefulSet(ss)];
  const a = { ...(ss.spec ?? {}) } as Record<string, unknown>;
  const b = { ...(old.spec ?? {}) } as Record<string, unknown>;
  for (const k of MUTABLE) { delete a[k]; delete b[k]; }
  if (!deepEqual(a, b)) {
    out.push(forbidden('spec', "updates to statefulset spec for fields other than 'replicas', " +
      "'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', " +
      "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"));
  }
  return out;
}

/** Upstream validateScheduleFormat (TZ in the schedule refused) and validateTimeZone. */
function scheduleAndZone(s: CronJob['spec'] & object): Cause[] {
  const out: Cause[] = [];
  if (!s.schedule) out.push(required('spec.schedule', ''));
  else {
    const r = parseCronSchedule(s.schedule);
    if (!r.ok) out.push(invalid('spec.schedule', s.schedule, r.error));
    if (s.schedule.includes('TZ')) {
      out.push(invalid('spec.schedule', s.schedule,
        'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
    }
  }
  if (s.timeZone !== undefined) {
    const msg = validateTimeZoneName(s.timeZone);
    if (msg) out.push(invalid('spec.timeZone', s.timeZone, msg));
  }
  return out;
}

export function validateCronJob(cj: CronJob): Cause[] {
  const out = validateObjectMeta(cj.metadata, META);
  const name = cj.metadata?.name ?? '';
  if (name.length > 52) out.push(invalid('metadata.name', name, 'must be no more than 52 characters'));
  const s = cj.spec;
  if (!s) return [...out, required('spec', '')];
  out.push(...scheduleAndZone(s));
  out.push(...nonNegative(s.startingDeadlineSeconds, 'spec.startingDeadlineSeconds'));
  const cp = s.concurrencyPolicy;
  if (!cp) out.push(required('spec.concurrencyPolicy', ''));
  else if (cp !== 'Allow' && cp !== 'Forbid' && cp !== 'Replace') {
    out.push(notSupported('spec.concurrencyPolicy', cp, ['Allow', 'Forbid', 'Replace']));
  }
  out.push(...nonNegative(s.successfulJobsHistoryLimit, 'spec.successfulJobsHistoryLimit'));
  out.push(...nonNegative(s.failedJobsHistoryLimit, 'spec.failedJobsHistoryLimit'));
  const js = s.jobTemplate?.spec;
  const p = 'spec.jobTemplate.spec';
  if (!js) out.push(required(p, ''));
  else {
    for (const f of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit',
      'ttlSecondsAfterFinished'] as const) out.push(...nonNegative(js[f], `${p}.${f}`));
    if (js.selector) out.push(...validateLabelSelector(js.selector, `${p}.selector`));
    out.push(...validatePodTemplateSpec(js.template, `${p}.template`));
    const rp = js.template?.spec?.restartPolicy;
    if (rp !== 'OnFailure' && rp !== 'Never') {
      out.push(notSupported(`${p}.template.spec.restartPolicy`, rp ?? '', ['OnFailure', 'Never']));
    }
  }
  return out;
}

export function validateCronJobUpdate(cj: CronJob, old: CronJob): Cause[] {
  const out = [...validateObjectMetaUpdate(cj.metadata, old.metadata), ...validateCronJob(cj)];
  out.push(...validateImmutable(cj.spec?.jobTemplate?.spec?.selector,
    old.spec?.jobTemplate?.spec?.selector, 'spec.jobTemplate.spec.selector'));
  return out;
}

/** Upstream ValidateControllerRevision(Create|Update): data required, revision >= 0, data fixed. */
export function validateControllerRevision(r: ControllerRevision): Cause[] {
  const out = validateObjectMeta(r.metadata, META);
  if (r.data === undefined || r.data === null) out.push(required('data', 'data is mandatory'));
  out.push(...nonNegative(r.revision, 'revision'));
  return out;
}

export function validateControllerRevisionUpdate(r: ControllerRevision, old: ControllerRevision): Cause[] {
  return [...validateObjectMetaUpdate(r.metadata, old.metadata), ...validateControllerRevision(r),
    ...validateImmutable(r.data, old.data, 'data')];
}
