// PodDisruptionBudget (policy/v1): the object, and which pods a budget covers (policy/v1: an
// empty selector every pod of its namespace, a null one none). Shared by the disruption
// controller and the API server's eviction.

import type { KubeObject } from './object.js';
import { labelSelectorMatcher } from './selectors.js';
import type { IntOrString, LabelSelector, Pod } from './types.js';

export interface PodDisruptionBudgetSpec {
  minAvailable?: IntOrString;
  maxUnavailable?: IntOrString;
  selector?: LabelSelector | null;
  unhealthyPodEvictionPolicy?: string;
}

export interface PodDisruptionBudget extends KubeObject {
  spec?: PodDisruptionBudgetSpec;
  status?: {
    observedGeneration?: number; disruptedPods?: Record<string, string>; disruptionsAllowed?: number;
    currentHealthy?: number; desiredHealthy?: number; expectedPods?: number;
    conditions?: Array<Record<string, unknown>>;
  };
}


export function matchesPod(pdb: PodDisruptionBudget, pod: Pod): boolean {
  if (pdb.metadata.namespace !== pod.metadata.namespace) return false;
  const sel = pdb.spec?.selector;
  if (sel === undefined || sel === null) return false;
  return labelSelectorMatcher(sel).matches(pod.metadata.labels ?? {});
}
