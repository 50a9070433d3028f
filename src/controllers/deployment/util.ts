// Deployment arithmetic as upstream's deploymentutil: surge/unavailable fenceposts, replica
// counts, revisions, conditions and the status calculation `kubectl rollout status` reads.

import type {
  Deployment, DeploymentStatus, IntOrString, ReplicaSet, WorkloadCondition,
} from '../../api/types.js';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';

export function scaledValue(v: IntOrString | undefined, total: number, roundUp: boolean,
  dflt: string): number {
  const x = v ?? dflt;
  if (typeof x === 'number') return x;
  const m = /^(\d+)%$/.exec(x);
  if (!m) return Number(x) || 0;
  const f = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(f) : Math.floor(f);
}

/** [maxSurge, maxUnavailable]; both zero would deadlock, so unavailable becomes 1. */
export function resolveFenceposts(d: Deployment): [number, number] {
  const replicas = d.spec?.replicas ?? 1;
  if (d.spec?.strategy?.type === 'Recreate') return [0, 0];
  const ru = d.spec?.strategy?.rollingUpdate;
  const surge = scaledValue(ru?.maxSurge, replicas, true, '25%');
  let unavailable = scaledValue(ru?.maxUnavailable, replicas, false, '25%');
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return [surge, unavailable];
}

export const specReplicas = (rs: ReplicaSet | undefined) => rs?.spec?.replicas ?? 0;
export const sumSpec = (rss: readonly ReplicaSet[]) => rss.reduce((n, r) => n + specReplicas(r), 0);
export const sumStatus = (rss: readonly ReplicaSet[], f: 'replicas' | 'readyReplicas' |
  'availableReplicas') => rss.reduce((n, r) => n + (r.status?.[f] ?? 0), 0);

export function revisionOf(rs: ReplicaSet): number {
  return Number(rs.metadata.annotations?.[REVISION_ANNOTATION] ?? 0) || 0;
}

export function maxRevision(rss: readonly ReplicaSet[]): number {
  return rss.reduce((m, r) => Math.max(m, revisionOf(r)), 0);
}

export function getCondition(s: DeploymentStatus | undefined, type: string) {
  return (s?.conditions ?? []).find((c) => c.type === type);
}

/** Sets a condition; keeps it (and its times) when status and reason are unchanged. */
export function setCondition(s: DeploymentStatus, c: WorkloadCondition): void {
  const cur = getCondition(s, c.type);
  if (cur && cur.status === c.status && cur.reason === c.reason) {
    if (cur.message !== c.message) {
      cur.message = c.message;
      cur.lastUpdateTime = c.lastUpdateTime;
    }
    return;
  }
  if (cur && cur.status === c.status) c.lastTransitionTime = cur.lastTransitionTime;
  s.conditions = [...(s.conditions ?? []).filter((x) => x.type !== c.type), c];
}

export function condition(type: string, status: 'True' | 'False', reason: string,
  message: string, now: string): WorkloadCondition {
  return { type, status, lastUpdateTime: now, lastTransitionTime: now, reason, message };
}

export function calculateStatus(d: Deployment, all: readonly ReplicaSet[],
  newRS: ReplicaSet | undefined, now: string): DeploymentStatus {
  const available = sumStatus(all, 'availableReplicas');
  const unavailable = Math.max(0, sumSpec(all) - available);
  const s: DeploymentStatus = {
    observedGeneration: d.metadata.generation,
    replicas: sumStatus(all, 'replicas'),
    updatedReplicas: newRS?.status?.replicas ?? 0,
    readyReplicas: sumStatus(all, 'readyReplicas'),
    availableReplicas: available,
    unavailableReplicas: unavailable,
    ...(d.status?.collisionCount !== undefined ? { collisionCount: d.status.collisionCount } : {}),
    conditions: (d.status?.conditions ?? []).map((c) => ({ ...c })),
  };
  const [, maxUnavailable] = resolveFenceposts(d);
  const replicas = d.spec?.replicas ?? 1;
  if (available >= replicas - maxUnavailable) {
    setCondition(s, condition('Available', 'True', 'MinimumReplicasAvailable',
      'Deployment has minimum availability.', now));
  } else {
    setCondition(s, condition('Available', 'False', 'MinimumReplicasUnavailable',
      'Deployment does not have minimum availability.', now));
  }
  return s;
}

export function deploymentComplete(d: Deployment, s: DeploymentStatus): boolean {
  const r = d.spec?.replicas ?? 1;
  return s.updatedReplicas === r && s.replicas === r && s.availableReplicas === r
    && (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0);
}

export function deploymentProgressing(d: Deployment, s: DeploymentStatus): boolean {
  const o = d.status ?? {};
  return (s.updatedReplicas ?? 0) > (o.updatedReplicas ?? 0)
    || (s.replicas ?? 0) - (s.updatedReplicas ?? 0) < (o.replicas ?? 0) - (o.updatedReplicas ?? 0)
    || (s.readyReplicas ?? 0) > (o.readyReplicas ?? 0)
    || (s.availableReplicas ?? 0) > (o.availableReplicas ?? 0);
}
