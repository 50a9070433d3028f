// Deployment, ReplicaSet, DaemonSet (apps/v1) and Job (batch/v1) validation as upstream
// (v1.33): selectors must be non-empty and match the template's labels, the template must be a
// valid pod template with the restart policy the controller needs; selectors are immutable.

import type {
  DaemonSet, Deployment, IntOrString, Job, LabelSelector, PodTemplateSpec, ReplicaSet,
} from '../types.js';
import { labelSelectorMatcher } from '../selectors.js';
import { isKdpError } from '../../errors.js';
import { type Cause, forbidden, invalid, notSupported, required } from './field-errors.js';
import {
  child, nameIsDNSSubdomain, nonNegative, validateImmutable, validateLabelSelector,
  validateObjectMeta, validateObjectMetaUpdate, deepEqual,
} from './common.js';
import { validatePodTemplateSpec } from './pod.js';

const META = { namespaced: true, nameFn: nameIsDNSSubdomain };

function selectorMatchesTemplate(sel: LabelSelector, t: PodTemplateSpec | undefined, path: string)
  : Cause[] {
  let matcher;
  try {
    // An unset key or operator is Go's "" (an invalid requirement), not a missing property.
    const exprs = sel.matchExpressions?.map((e) => ({ ...e, key: e.key ?? '',
      operator: e.operator ?? '' }));
    matcher = labelSelectorMatcher(exprs ? { ...sel, matchExpressions: exprs } : sel);
  } catch (e) {
    if (isKdpError(e)) return [invalid(child(path, 'selector'), sel, 'invalid label selector')];
    throw e;
  }
  if (matcher.empty || matcher.matches(t?.metadata?.labels)) return [];
  return [invalid(`${path}.template.metadata.labels`, t?.metadata?.labels ?? {},
    '`selector` does not match template `labels`')];
}

/** Selector required and non-empty; template labels must match; template valid. */
function validateSelectorAndTemplate(sel: LabelSelector | undefined, t: PodTemplateSpec | undefined,
  what: string, path: string): Cause[] {
  const out: Cause[] = [];
  if (!sel) out.push(required(child(path, 'selector'), ''));
  else {
    out.push(...validateLabelSelector(sel, child(path, 'selector')));
    const n = Object.keys(sel.matchLabels ?? {}).length + (sel.matchExpressions?.length ?? 0);
    if (n === 0) out.push(invalid(child(path, 'selector'), sel,
      `empty selector is invalid for ${what}`));
    else out.push(...selectorMatchesTemplate(sel, t, path));
  }
  out.push(...validatePodTemplateSpec(t, child(path, 'template')));
  return out;
}

function alwaysRestart(t: PodTemplateSpec | undefined, kind: string, path: string): Cause[] {
  const out: Cause[] = [];
  const rp = t?.spec?.restartPolicy;
  if (rp && rp !== 'Always') out.push(notSupported(`${path}.template.spec.restartPolicy`, rp,
    ['Always']));
  if (t?.spec?.activeDeadlineSeconds !== undefined) {
    out.push(forbidden(`${path}.template.spec.activeDeadlineSeconds`,
      `activeDeadlineSeconds in ${kind} is not Supported`));
  }
  return out;
}

function isPercent(s: string): boolean {
  return /^[0-9]+%$/.test(s);
}

export function intOrPercent(v: IntOrString | undefined, path: string): Cause[] {
  if (v === undefined) return [];
  if (typeof v === 'string') {
    if (!isPercent(v)) return [invalid(path, v, "must be an integer or percentage (e.g '5%')")];
    if (Number(v.slice(0, -1)) > 100) return [invalid(path, v, 'must not be greater than 100%')];
    return [];
  }
  return nonNegative(v, path);
}

const isZero = (v: IntOrString | undefined): boolean => v === 0 || v === '0%';

function validateRolling(ru: { maxUnavailable?: IntOrString; maxSurge?: IntOrString }, path: string)
  : Cause[] {
  const out = [...intOrPercent(ru.maxUnavailable, child(path, 'maxUnavailable')),
    ...intOrPercent(ru.maxSurge, child(path, 'maxSurge'))];
  if (isZero(ru.maxUnavailable) && isZero(ru.maxSurge ?? 0)) {
    out.push(invalid(child(path, 'maxUnavailable'), ru.maxUnavailable,
      'may not be 0 when `maxSurge` is 0'));
  }
  return out;
}

export function validateDeployment(d: Deployment): Cause[] {
  const out = validateObjectMeta(d.metadata, META);
  const s = d.spec;
  if (!s) return [...out, required('spec', '')];
  out.push(...nonNegative(s.replicas, 'spec.replicas'));
  out.push(...validateSelectorAndTemplate(s.selector, s.template, 'deployment', 'spec'));
  out.push(...alwaysRestart(s.template, 'ReplicaSet', 'spec'));
  const st = s.strategy ?? {};
  if (st.type === 'Recreate') {
    if (st.rollingUpdate) out.push(forbidden('spec.strategy.rollingUpdate',
      "may not be specified when strategy `type` is 'Recreate'"));
  } else if (st.type === 'RollingUpdate') {
    if (!st.rollingUpdate) out.push(required('spec.strategy.rollingUpdate',
      'this should be defaulted and never be nil'));
    else out.push(...validateRolling(st.rollingUpdate, 'spec.strategy.rollingUpdate'));
  } else {
    out.push(notSupported('spec.strategy.type', st.type ?? '', ['Recreate', 'RollingUpdate']));
  }
  out.push(...nonNegative(s.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  out.push(...nonNegative(s.minReadySeconds, 'spec.minReadySeconds'));
  out.push(...nonNegative(s.progressDeadlineSeconds, 'spec.progressDeadlineSeconds'));
  const pds = s.progressDeadlineSeconds;
  if (pds !== undefined && pds <= (s.minReadySeconds ?? 0)) {
    out.push(invalid('spec.progressDeadlineSeconds', s.progressDeadlineSeconds,
      'must be greater than minReadySeconds'));
  }
  return out;
}

export function validateReplicaSet(rs: ReplicaSet): Cause[] {
  const out = validateObjectMeta(rs.metadata, META);
  const s = rs.spec;
  if (!s) return [...out, required('spec', '')];
  out.push(...nonNegative(s.replicas, 'spec.replicas'));
  out.push(...nonNegative(s.minReadySeconds, 'spec.minReadySeconds'));
  // Upstream says "for deployment" here too.
  out.push(...validateSelectorAndTemplate(s.selector, s.template, 'deployment', 'spec'));
  out.push(...alwaysRestart(s.template, 'ReplicaSet', 'spec'));
  return out;
}

export function validateDaemonSet(ds: DaemonSet): Cause[] {
  const out = validateObjectMeta(ds.metadata, META);
  const s = ds.spec;
  if (!s) return [...out, required('spec', '')];
  out.push(...validateSelectorAndTemplate(s.selector, s.template, 'daemonset', 'spec'));
  out.push(...alwaysRestart(s.template, 'DaemonSet', 'spec'));
  out.push(...nonNegative(s.minReadySeconds, 'spec.minReadySeconds'));
  out.push(...nonNegative(s.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  const st = s.updateStrategy ?? {};
  if (st.type === 'RollingUpdate') {
    if (!st.rollingUpdate) out.push(required('spec.updateStrategy.rollingUpdate', ''));
    else out.push(...validateRolling(st.rollingUpdate, 'spec.updateStrategy.rollingUpdate'));
  } else if (st.type !== 'OnDelete') {
    out.push(notSupported('spec.updateStrategy.type', st.type ?? '', ['OnDelete',
      'RollingUpdate']));
  }
  return out;
}

export function validateJob(j: Job): Cause[] {
  const out = validateObjectMeta(j.metadata, META);
  const s = j.spec;
  if (!s) return [...out, required('spec', '')];
  for (const f of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit',
    'ttlSecondsAfterFinished'] as const) {
    out.push(...nonNegative(s[f], `spec.${f}`));
  }
  if (!s.selector) out.push(required('spec.selector', ''));
  else {
    out.push(...validateLabelSelector(s.selector, 'spec.selector'));
    out.push(...selectorMatchesTemplate(s.selector, s.template, 'spec'));
  }
  out.push(...validatePodTemplateSpec(s.template, 'spec.template'));
  const rp = s.template?.spec?.restartPolicy;
  if (rp !== 'OnFailure' && rp !== 'Never') {
    out.push(notSupported('spec.template.spec.restartPolicy', rp ?? '', ['OnFailure', 'Never']));
  }
  const mode = s.completionMode;
  if (mode !== undefined && mode !== 'NonIndexed' && mode !== 'Indexed') {
    out.push(notSupported('spec.completionMode', mode, ['NonIndexed', 'Indexed']));
  }
  if (mode === 'Indexed' && s.completions === undefined) {
    out.push(required('spec.completions', 'when completion mode is Indexed'));
  }
  return out;
}

type WithSelector = { spec?: { selector?: LabelSelector } };

function selectorImmutable(n: WithSelector, o: WithSelector): Cause[] {
  return validateImmutable(n.spec?.selector, o.spec?.selector, 'spec.selector');
}

export function validateDeploymentUpdate(d: Deployment, old: Deployment): Cause[] {
  return [...validateObjectMetaUpdate(d.metadata, old.metadata), ...validateDeployment(d),
    ...selectorImmutable(d, old)];
}

export function validateReplicaSetUpdate(rs: ReplicaSet, old: ReplicaSet): Cause[] {
  return [...validateObjectMetaUpdate(rs.metadata, old.metadata), ...validateReplicaSet(rs),
    ...selectorImmutable(rs, old)];
}

export function validateDaemonSetUpdate(ds: DaemonSet, old: DaemonSet): Cause[] {
  return [...validateObjectMetaUpdate(ds.metadata, old.metadata), ...validateDaemonSet(ds),
    ...selectorImmutable(ds, old)];
}

/** Job selector, completion mode and (unless suspended and never started) template are fixed. */
export function validateJobUpdate(j: Job, old: Job): Cause[] {
  const out = [...validateObjectMetaUpdate(j.metadata, old.metadata), ...validateJob(j),
    ...selectorImmutable(j, old)];
  const s = j.spec;
  const o = old.spec;
  if (!s || !o) return out;
  const mutableTemplate = s.suspend === true && !old.status?.startTime;
  if (!mutableTemplate && !deepEqual(s.template, o.template)) {
    out.push(invalid('spec.template', s.template, 'field is immutable'));
  }
  out.push(...validateImmutable(s.completionMode, o.completionMode, 'spec.completionMode'));
  return out;
}
