// PodDisruptionBudget (policy/v1) validation as upstream's pkg/apis/policy/validation
// (v1.33): minAvailable xor maxUnavailable, each a non-negative integer or a percentage up to
// 100%, a valid label selector, a supported unhealthyPodEvictionPolicy. The spec is mutable.

import type { KubeObject } from '../object.js';
import type { ObjectMeta } from '../types.js';
import type { PodDisruptionBudget, PodDisruptionBudgetSpec } from '../pdb.js';
import { child, nameIsDNSSubdomain, validateLabelSelector, validateObjectMeta,
  validateObjectMetaUpdate } from './common.js';
import { type Cause, invalid, notSupported } from './field-errors.js';
import { intOrPercent } from './workloads.js';

export const UNHEALTHY_POD_EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget'];

function validateSpec(spec: PodDisruptionBudgetSpec, path: string): Cause[] {
  const out: Cause[] = [];
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) {
    out.push(invalid(path, spec, 'minAvailable and maxUnavailable cannot be both set'));
  }
  out.push(...intOrPercent(spec.minAvailable, child(path, 'minAvailable')));
  out.push(...intOrPercent(spec.maxUnavailable, child(path, 'maxUnavailable')));
  if (spec.selector) out.push(...validateLabelSelector(spec.selector, child(path, 'selector')));
  const p = spec.unhealthyPodEvictionPolicy;
  if (p !== undefined && !UNHEALTHY_POD_EVICTION_POLICIES.includes(p)) {
    out.push(notSupported(child(path, 'unhealthyPodEvictionPolicy'), p, UNHEALTHY_POD_EVICTION_POLICIES));
  }
  return out;
}

export function validatePodDisruptionBudget(o: KubeObject): Cause[] {
  const pdb = o as PodDisruptionBudget;
  return [...validateObjectMeta(pdb.metadata as ObjectMeta, { namespaced: true, nameFn: nameIsDNSSubdomain }),
    ...validateSpec(pdb.spec ?? {}, 'spec')];
}

export function validatePodDisruptionBudgetUpdate(o: KubeObject, old: KubeObject): Cause[] {
  const pdb = o as PodDisruptionBudget;
  return [...validateObjectMetaUpdate(pdb.metadata as ObjectMeta, old.metadata as ObjectMeta),
    ...validateSpec(pdb.spec ?? {}, 'spec')];
}
