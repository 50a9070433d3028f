// The Deployment controller: one ReplicaSet per pod template (named `<deploy>-<hash>`, labelled
// pod-template-hash), rolled with RollingUpdate (maxSurge/maxUnavailable) or Recreate; revision
// annotations (so `kubectl rollout undo`, which patches the template back, reuses the old
// ReplicaSet under a new revision); revisionHistoryLimit cleanup; status and the
// Available/Progressing conditions `kubectl rollout status` waits on.

import type { Deployment, Pod, ReplicaSet } from '../../api/types.js';
import { labelSelectorMatcher } from '../../api/selectors.js';
import { isKdpError } from '../../errors.js';
import { objectKey } from '../../client/cache.js';
import type { ControllerContext } from '../options.js';
import { DEPLOYMENTS, inNs, PODS, REPLICASETS } from '../refs.js';
import { CONTROLLER_UID_INDEX, controllerUidIndex } from '../replicaset/controller.js';
import { buildQueueController } from '../runner.js';
import { controllerRef, isoNow, isPodTerminal, type Controller } from '../util.js';
import {
  activeReplicaSets, findNewReplicaSet, findOldReplicaSets, getNewReplicaSet, scaleReplicaSet,
  sortByRevision, type RsOps,
} from './replica-sets.js';
import { newRSNewReplicas, planOldScaleDown, reconcileNewTarget } from './rolling.js';
import {
  calculateStatus, condition, DESIRED_REPLICAS_ANNOTATION, deploymentComplete,
  deploymentProgressing, getCondition, resolveFenceposts, REVISION_ANNOTATION, setCondition,
  specReplicas,
} from './util.js';

export function buildDeploymentController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const dInf = ctx.informers.informerFor<Deployment>(DEPLOYMENTS);
  const rsInf = ctx.informers.informerFor<ReplicaSet>(REPLICASETS, {
    indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndex },
  });
  const podInf = ctx.informers.informerFor<Pod>(PODS, {
    indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndex },
  });
  const ops: RsOps = { client, recorder: ctx.recorder('deployment-controller'),
    now: () => isoNow(options.now()) };
  const byUid = new Map<string, string>();
  const c = buildQueueController('deployment', options.workers, sync);

  dInf.addEventHandler({
    onAdd: (d) => { byUid.set(d.metadata.uid!, objectKey(d)); c.queue.add(objectKey(d)); },
    onUpdate: (_, d) => c.queue.add(objectKey(d)),
    onDelete: (d) => byUid.delete(d.metadata.uid!),
  });
  const owner = (rs: ReplicaSet) => {
    const r = controllerRef(rs);
    return r?.kind === 'Deployment' ? byUid.get(r.uid) : undefined;
  };
  rsInf.addEventHandler({
    onAdd: (rs) => { const k = owner(rs); if (k) c.queue.add(k); },
    onUpdate: (_, rs) => { const k = owner(rs); if (k) c.queue.add(k); },
    onDelete: (rs) => { const k = owner(rs); if (k) c.queue.add(k); },
  });
  // Recreate waits for old pods to go: their deletion must wake the deployment.
  podInf.addEventHandler({
    onDelete: (p) => {
      const r = controllerRef(p);
      const rs = r ? rsInf.cache.getByName(p.metadata.namespace, r.name) : undefined;
      const k = rs && owner(rs);
      if (k) c.queue.add(k);
    },
  });

  async function sync(key: string): Promise<void> {
    const d = dInf.cache.get(key);
    if (!d) return;
    const rss = await claimReplicaSets(d);
    if (d.metadata.deletionTimestamp) {
      await syncStatus(d, rss, findNewReplicaSet(d, rss));
      return;
    }
    if (d.spec?.paused || isScalingEvent(d, rss)) { await syncScale(d, rss); return; }
    if (d.spec?.strategy?.type === 'Recreate') await rolloutRecreate(d, rss);
    else await rolloutRolling(d, rss);
  }

  async function claimReplicaSets(d: Deployment): Promise<ReplicaSet[]> {
    const owned = rsInf.cache.byIndex(CONTROLLER_UID_INDEX, d.metadata.uid!);
    const sel = labelSelectorMatcher(d.spec?.selector);
    for (const rs of rsInf.cache.byIndex('namespace', d.metadata.namespace ?? '')) {
      if (controllerRef(rs) || rs.metadata.deletionTimestamp || !sel.matches(rs.metadata.labels)) {
        continue;
      }
      try {
        const refs = [...(rs.metadata.ownerReferences ?? []), { apiVersion: 'apps/v1',
          kind: 'Deployment', name: d.metadata.name!, uid: d.metadata.uid!, controller: true,
          blockOwnerDeletion: true }];
        owned.push(await client.patch<ReplicaSet>(inNs(REPLICASETS, rs.metadata.namespace),
          rs.metadata.name!, 'merge', { metadata: { ownerReferences: refs } }));
      } catch (e) {
        if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
      }
    }
    return owned;
  }

  function isScalingEvent(d: Deployment, rss: ReplicaSet[]): boolean {
    const want = String(d.spec?.replicas ?? 1);
    return activeReplicaSets(rss).some((rs) => {
      const a = rs.metadata.annotations?.[DESIRED_REPLICAS_ANNOTATION];
      return a !== undefined && a !== want;
    });
  }

  async function newAndOld(d: Deployment, rss: ReplicaSet[], create: boolean) {
    const old = findOldReplicaSets(d, rss);
    const res = await getNewReplicaSet(ops, d, rss, old, create,
      (dd) => newRSNewReplicas(dd, rss, undefined));
    if (res.collision) {
      await client.update(inNs(DEPLOYMENTS, d.metadata.namespace), {
        ...d, status: { ...(d.status ?? {}), collisionCount: (d.status?.collisionCount ?? 0) + 1 },
      }, { subresource: 'status' });
      throw new Error(`hash collision for deployment ${d.metadata.name}`);
    }
    if (res.rs) await syncDeploymentRevision(d, res.rs);
    return { newRS: res.rs, old, created: !!res.created };
  }

  async function syncDeploymentRevision(d: Deployment, rs: ReplicaSet): Promise<void> {
    const rev = rs.metadata.annotations?.[REVISION_ANNOTATION];
    if (!rev || d.metadata.annotations?.[REVISION_ANNOTATION] === rev) return;
    await client.patch(inNs(DEPLOYMENTS, d.metadata.namespace), d.metadata.name!, 'merge',
      { metadata: { annotations: { [REVISION_ANNOTATION]: rev } } });
  }

  async function rolloutRolling(d: Deployment, rss: ReplicaSet[]): Promise<void> {
    const { newRS, old, created } = await newAndOld(d, rss, true);
    const all = newRS && !rss.includes(newRS) ? [...rss.filter((r) => r.metadata.name !==
      newRS.metadata.name), newRS] : rss;
    if (created) { await syncStatus(d, all, newRS, true); return; }
    if (newRS) {
      const target = reconcileNewTarget(d, all, newRS);
      if (target !== undefined) {
        await scaleReplicaSet(ops, d, newRS, target);
        await syncStatus(d, all, newRS);
        return;
      }
    }
    const plan = planOldScaleDown(d, all, activeReplicaSets(old), newRS);
    if (plan.size > 0) {
      for (const rs of old) {
        const t = plan.get(rs.metadata.name!);
        if (t !== undefined) await scaleReplicaSet(ops, d, rs, t);
      }
      await syncStatus(d, all, newRS);
      return;
    }
    const status = calculateStatus(d, all, newRS, ops.now());
    if (deploymentComplete(d, status)) await cleanup(d, old);
    await syncStatus(d, all, newRS);
  }

  async function rolloutRecreate(d: Deployment, rss: ReplicaSet[]): Promise<void> {
    let { newRS, old } = await newAndOld(d, rss, false);
    const activeOld = activeReplicaSets(old);
    if (activeOld.length) {
      for (const rs of activeOld) await scaleReplicaSet(ops, d, rs, 0);
      await syncStatus(d, rss, newRS);
      return;
    }
    const oldPodsRunning = old.some((rs) => podInf.cache.byIndex(CONTROLLER_UID_INDEX,
      rs.metadata.uid!).some((p) => !isPodTerminal(p)));
    if (oldPodsRunning) { await syncStatus(d, rss, newRS); return; }
    if (!newRS) ({ newRS } = await newAndOld(d, rss, true));
    if (newRS && specReplicas(newRS) !== (d.spec?.replicas ?? 1)) {
      await scaleReplicaSet(ops, d, newRS, d.spec?.replicas ?? 1);
    }
    const all = newRS ? [...old, newRS] : old;
    if (deploymentComplete(d, calculateStatus(d, all, newRS, ops.now()))) await cleanup(d, old);
    await syncStatus(d, all, newRS);
  }

  /** Scaling without a template change (upstream sync/scale, proportional when rolling). */
  async function syncScale(d: Deployment, rss: ReplicaSet[]): Promise<void> {
    const { newRS, old } = await newAndOld(d, rss, false);
    const all = newRS ? [...old, newRS] : old;
    const replicas = d.spec?.replicas ?? 1;
    const active = activeReplicaSets(all);
    const target = active.length === 1 ? active[0] : active.length === 0
      ? (newRS ?? sortByRevision(old).at(-1)) : undefined;
    if (target) {
      await scaleReplicaSet(ops, d, target, replicas);
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
        await scaleReplicaSet(ops, d, rs, Math.max(0, n));
      }
      toAdd = 0;
    }
    if (!d.spec?.paused && deploymentComplete(d, calculateStatus(d, all, newRS, ops.now()))) {
      await cleanup(d, old);
    }
    await syncStatus(d, all, newRS);
  }

  async function cleanup(d: Deployment, old: ReplicaSet[]): Promise<void> {
    const limit = d.spec?.revisionHistoryLimit ?? 10;
    const idle = sortByRevision(old.filter((rs) => specReplicas(rs) === 0
      && (rs.status?.replicas ?? 0) === 0 && !rs.metadata.deletionTimestamp));
    for (const rs of idle.slice(0, Math.max(0, idle.length - limit))) {
      try {
        await client.delete(inNs(REPLICASETS, rs.metadata.namespace), rs.metadata.name!);
      } catch (e) { if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e; }
    }
  }

  async function syncStatus(d: Deployment, all: ReplicaSet[], newRS?: ReplicaSet,
    created = false): Promise<void> {
    const now = ops.now();
    const s = calculateStatus(d, all, newRS, now);
    const name = newRS?.metadata.name;
    const prog = getCondition(s, 'Progressing');
    const complete = s.replicas === s.updatedReplicas && prog?.reason === 'NewReplicaSetAvailable'
      && deploymentComplete(d, s);
    if (created && name) {
      setCondition(s, condition('Progressing', 'True', 'NewReplicaSetCreated',
        `Created new replica set "${name}"`, now));
    } else if (!complete && name) {
      if (deploymentComplete(d, s)) {
        setCondition(s, condition('Progressing', 'True', 'NewReplicaSetAvailable',
          `ReplicaSet "${name}" has successfully progressed.`, now));
      } else if (deploymentProgressing(d, s) || !prog || prog.reason === 'NewReplicaSetAvailable') {
        setCondition(s, condition('Progressing', 'True', 'ReplicaSetUpdated',
          `ReplicaSet "${name}" is progressing.`, now));
      }
    }
    if (JSON.stringify(s) === JSON.stringify({ ...d.status, conditions: d.status?.conditions })) {
      return;
    }
    try {
      await client.update(inNs(DEPLOYMENTS, d.metadata.namespace), { ...d, status: s },
        { subresource: 'status' });
    } catch (e) {
      if (isKdpError(e, 'KDP_CONFLICT')) { c.queue.addAfter(objectKey(d), 10); return; }
      if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
    }
  }

  return { name: 'deployment', start: c.start, stop: c.stop };
}
