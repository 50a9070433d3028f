// Building pods from a template and choosing which pods to delete first (upstream
// controller.ActivePods ordering: unassigned, then Pending/Unknown/Running, not-ready before
// ready, more recently ready first, more restarts first, newer first).

import type { Pod, PodTemplateSpec } from '../../api/types.js';
import type { KubeObject } from '../../client/types.js';
import { clone, isPodReady, ownerRefTo, podReadyCondition } from '../util.js';

export function podFromTemplate(
  template: PodTemplateSpec | undefined, owner: KubeObject, apiVersion: string, kind: string,
): Pod {
  const md = template?.metadata ?? {};
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      generateName: `${owner.metadata.name}-`,
      namespace: owner.metadata.namespace,
      labels: { ...(md.labels ?? {}) },
      ...(md.annotations ? { annotations: { ...md.annotations } } : {}),
      ...(md.finalizers ? { finalizers: [...md.finalizers] } : {}),
      ownerReferences: [ownerRefTo(owner, apiVersion, kind)],
    },
    spec: clone(template?.spec ?? { containers: [] }),
  };
}

const PHASE_RANK: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

function restarts(p: Pod): number {
  return (p.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
}

function ts(s: string | null | undefined): number {
  return s ? Date.parse(s) : 0;
}

/** Negative when `a` should be deleted before `b`. */
export function compareForDeletion(a: Pod, b: Pod): number {
  const assigned = (p: Pod) => (p.spec?.nodeName ? 1 : 0);
  if (assigned(a) !== assigned(b)) return assigned(a) - assigned(b);
  const pa = PHASE_RANK[a.status?.phase ?? 'Pending'] ?? 0;
  const pb = PHASE_RANK[b.status?.phase ?? 'Pending'] ?? 0;
  if (pa !== pb) return pa - pb;
  const ra = isPodReady(a) ? 1 : 0;
  const rb = isPodReady(b) ? 1 : 0;
  if (ra !== rb) return ra - rb;
  if (ra && rb) {
    const readyAt = (p: Pod) => ts(podReadyCondition(p)?.lastTransitionTime);
    const d = readyAt(b) - readyAt(a);
    if (d !== 0) return d;
  }
  if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a);
  return ts(b.metadata.creationTimestamp) - ts(a.metadata.creationTimestamp);
}

export function podsToDelete(pods: Pod[], n: number): Pod[] {
  return [...pods].sort(compareForDeletion).slice(0, n);
}
