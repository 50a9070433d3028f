// The Deployment strategies (upstream sync/rolling/recreate): RollingUpdate within
// maxSurge/maxUnavailable, Recreate (old pods gone before the new ReplicaSet scales up), and a
// scaling event without a template change (proportional when several ReplicaSets are active).

import type { Deployment, ReplicaSet } from '../../api/types.js';
import { CONTROLLER_UID_INDEX } from '../replicaset/controller.js';
import { isPodTerminal } from '../util.js';
import { activeReplicaSets, scaleReplicaSet, sortByRevision } from './replica-sets.js';
import { planOldScaleDown, reconcileNewTarget } from './rolling.js';
import { syncStatus } from './status.js';
import { cleanup, newAndOld, type DeploymentSync } from './steps.js';
import { calculateStatus, deploymentComplete, resolveFenceposts, specReplicas } from './util.js';

export async function rolloutRolling(ds: DeploymentSync, d: Deployment, rss: ReplicaSet[]): Promise<void> {
  const { newRS, old, created } = await newAndOld(ds, d, rss, true);
  const all = newRS && !rss.includes(newRS) ? [...rss.filter((r) => r.metadata.name !==
    newRS.metadata.name), newRS] : rss;
  if (created) { await syncStatus(ds, d, all, newRS, true); return; }
  if (newRS) {
    const target = reconcileNewTarget(d, all, newRS);
    if (target !== undefined) {
      await scaleReplicaSet(ds.ops, d, newRS, target);
      await syncStatus(ds, d, all, newRS);
      return;
    }
  }
  const plan = planOldScaleDown(d, all, activeReplicaSets(old), newRS);
  if (plan.size > 0) {
    for (const rs of old) {
      const t = plan.get(rs.metadata.name!);
      if (t !== undefined) await scaleReplicaSet(ds.ops, d, rs, t);
    }
    await syncStatus(ds, d, all, newRS);
    return;
  }
  const status = calculateStatus(d, all, newRS, ds.ops.now());
  if (deploymentComplete(d, status)) await cleanup(ds, d, old);
  await syncStatus(ds, d, all, newRS);
}

export async function rolloutRecreate(ds: DeploymentSync, d: Deployment, rss: ReplicaSet[]): Promise<void> {
  let { newRS, old } = await newAndOld(ds, d, rss, false);
  const activeOld = activeReplicaSets(old);
  if (activeOld.length) {
    for (const rs of activeOld) await scaleReplicaSet(ds.ops, d, rs, 0);
    await syncStatus(ds, d, rss, newRS);
    return;
  }
  const oldPodsRunning = old.some((rs) => ds.pods.byIndex(CONTROLLER_UID_INDEX,
    rs.metadata.uid!).some((p) => !isPodTerminal(p)));
  if (oldPodsRunning) { await syncStatus(ds, d, rss, newRS); return; }
  if (!newRS) ({ newRS } = await newAndOld(ds, d, rss, true));
  if (newRS && specReplicas(newRS) !== (d.spec?.replicas ?? 1)) {
    await scaleReplicaSet(ds.ops, d, newRS, d.spec?.replicas ?? 1);
  }
  const all = newRS ? [...old, newRS] : old;
  if (deploymentComplete(d, calculateStatus(d, all, newRS, ds.ops.now()))) await cleanup(ds, d, old);
  await syncStatus(ds, d, all, newRS);
}

/** Scaling without a template change (upstream sync/scale, proportional when rolling). */
export async function syncScale(ds: DeploymentSync, d: Deployment, rss: ReplicaSet[]): Promise<void> {
  const { newRS, old } = await newAndOld(ds, d, rss, false);
  const all = newRS ? [...old, newRS] : old;
  const replicas = d.spec?.replicas ?? 1;
  const active = activeReplicaSets(all);
  const target = active.length === 1 ? active[0] : active.length === 0
    ? (newRS ?? sortByRevision(old).at(-1)) : undefined;
  if (target) {
    await scaleReplicaSet(ds.ops, d, target, replicas);
  } else {
    // Several active: share the change proportionally, the remainder to the newest.
    const total = active.reduce((n, r) => n + specReplicas(r), 0);
    const [surge] = resolveFenceposts(d);
    let toAdd = replicas + surge - total;
    const sorted = sortByRevision(active).reverse();
    const shares = sorted.map((rs) =>
      Math.trunc((specReplicas(rs) * toAdd) / Math.max(1, total)));
    let left = toAdd - shares.reduce((a, b) => a + b, 0);
    for (let i = 0; i < sorted.length; i++) {
      const rs = sorted[i]!;
      let n = specReplicas(rs) + shares[i]!;
      if (i === 0) { n += left; left = 0; }
      await scaleReplicaSet(ds.ops, d, rs, Math.max(0, n));
    }
    toAdd = 0;
  }
  if (!d.spec?.paused && deploymentComplete(d, calculateStatus(d, all, newRS, ds.ops.now()))) {
    await cleanup(ds, d, old);
  }
  await syncStatus(ds, d, all, newRS);
}
