// The RollingUpdate strategy's arithmetic (upstream rolling.go): scale the new ReplicaSet up to
// at most replicas+maxSurge pods in total, and old ones down while keeping at least
// replicas-maxUnavailable available, unhealthy old replicas first.

import type { Deployment, ReplicaSet } from '../../api/types.js';
import { resolveFenceposts, specReplicas, sumSpec } from './util.js';

/** Upstream NewRSNewReplicas. */
export function newRSNewReplicas(d: Deployment, all: readonly ReplicaSet[], newRS?: ReplicaSet) {
  const replicas = d.spec?.replicas ?? 1;
  if (d.spec?.strategy?.type === 'Recreate') return replicas;
  const [surge] = resolveFenceposts(d);
  const current = sumSpec(all);
  const maxTotal = replicas + surge;
  if (current >= maxTotal) return specReplicas(newRS);
  const scaleUp = Math.min(maxTotal - current, replicas - specReplicas(newRS));
  return specReplicas(newRS) + Math.max(0, scaleUp);
}

/** Target for the new ReplicaSet, or undefined when it needs no change. */
export function reconcileNewTarget(d: Deployment, all: readonly ReplicaSet[], newRS: ReplicaSet) {
  const replicas = d.spec?.replicas ?? 1;
  const cur = specReplicas(newRS);
  if (cur === replicas) return undefined;
  if (cur > replicas) return replicas;
  const n = newRSNewReplicas(d, all, newRS);
  return n === cur ? undefined : n;
}

/** How many old replicas may go now (upstream reconcileOldReplicaSets' maxScaledDown). */
export function maxScaledDown(d: Deployment, all: readonly ReplicaSet[], newRS?: ReplicaSet) {
  const replicas = d.spec?.replicas ?? 1;
  const [, maxUnavailable] = resolveFenceposts(d);
  const minAvailable = replicas - maxUnavailable;
  const newUnavailable = specReplicas(newRS) - (newRS?.status?.availableReplicas ?? 0);
  return sumSpec(all) - minAvailable - newUnavailable;
}

/** Plan: old ReplicaSet name → new replica count. Unhealthy replicas first, oldest RS first. */
export function planOldScaleDown(
  d: Deployment, all: readonly ReplicaSet[], oldActive: readonly ReplicaSet[], newRS?: ReplicaSet,
): Map<string, number> {
  const plan = new Map<string, number>();
  let budget = maxScaledDown(d, all, newRS);
  if (budget <= 0 || sumSpec(oldActive) === 0) return plan;
  const created = (r: ReplicaSet) => Date.parse(r.metadata.creationTimestamp ?? '');
  const olds = [...oldActive].sort((a, b) => created(a) - created(b));
  const target = new Map(olds.map((r) => [r.metadata.name!, specReplicas(r)]));
  // 1. unhealthy replicas (spec - available) can go without reducing availability
  for (const rs of olds) {
    if (budget <= 0) break;
    const cur = target.get(rs.metadata.name!)!;
    const unhealthy = cur - (rs.status?.availableReplicas ?? 0);
    if (unhealthy <= 0) continue;
    const n = Math.min(budget, unhealthy);
    target.set(rs.metadata.name!, cur - n);
    budget -= n;
  }
  // 2. healthy ones, keeping minAvailable
  const replicas = d.spec?.replicas ?? 1;
  const [, maxUnavailable] = resolveFenceposts(d);
  const minAvailable = replicas - maxUnavailable;
  const available = all.reduce((n, r) => n + (r.status?.availableReplicas ?? 0), 0);
  let total = available - minAvailable;
  for (const rs of olds) {
    if (total <= 0) break;
    const cur = target.get(rs.metadata.name!)!;
    if (cur === 0) continue;
    const n = Math.min(cur, total);
    target.set(rs.metadata.name!, cur - n);
    total -= n;
  }
  for (const rs of olds) {
    const t = target.get(rs.metadata.name!)!;
    if (t !== specReplicas(rs)) plan.set(rs.metadata.name!, t);
  }
  return plan;
}
