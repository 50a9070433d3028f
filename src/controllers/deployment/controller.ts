// The Deployment controller: one ReplicaSet per pod template (named `<deploy>-<hash>`, labelled
// pod-template-hash), rolled with RollingUpdate (maxSurge/maxUnavailable) or Recreate; revision
// annotations (so `kubectl rollout undo`, which patches the template back, reuses the old
// ReplicaSet under a new revision); revisionHistoryLimit cleanup; status and the
// Available/Progressing conditions `kubectl rollout status` waits on. This file wires the
// informers and dispatches each sync; the steps are named modules (steps.ts, rollout.ts,
// status.ts) taking one DeploymentSync context.

import type { Deployment, Pod, ReplicaSet } from '../../api/types.js';
import { objectKey, type ObjectCache } from '../../client/cache.js';
import type { ControllerContext } from '../options.js';
import { DEPLOYMENTS, PODS, REPLICASETS } from '../refs.js';
import { CONTROLLER_UID_INDEX, controllerUidIndex } from '../replicaset/controller.js';
import { buildQueueController } from '../runner.js';
import { controllerRef, isoNow, type Controller } from '../util.js';
import { findNewReplicaSet } from './replica-sets.js';
import { rolloutRecreate, rolloutRolling, syncScale } from './rollout.js';
import { syncStatus } from './status.js';
import { claimReplicaSets, isScalingEvent, type DeploymentSync } from './steps.js';

export function buildDeploymentController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const dInf = ctx.informers.informerFor<Deployment>(DEPLOYMENTS);
  const rsInf = ctx.informers.informerFor<ReplicaSet>(REPLICASETS, {
    indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndex },
  });
  const podInf = ctx.informers.informerFor<Pod>(PODS, {
    indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndex },
  });
  const byUid = new Map<string, string>();
  const c = buildQueueController('deployment', options.workers, (key) => syncDeployment(ds, key, dInf.cache));
  const ds: DeploymentSync = {
    client,
    ops: { client, recorder: ctx.recorder('deployment-controller'), now: () => isoNow(options.now()) },
    replicaSets: rsInf.cache,
    pods: podInf.cache,
    requeueAfter: (key, ms) => c.queue.addAfter(key, ms),
  };

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

  return { name: 'deployment', start: c.start, stop: c.stop };
}

/** One sync of the Deployment at `key`: adopt, then status only (being deleted), scale
 *  (paused or a scaling event), or roll out by its strategy. */
async function syncDeployment(ds: DeploymentSync, key: string, deployments: ObjectCache<Deployment>): Promise<void> {
  const d = deployments.get(key);
  if (!d) return;
  const rss = await claimReplicaSets(ds, d);
  if (d.metadata.deletionTimestamp) {
    await syncStatus(ds, d, rss, findNewReplicaSet(d, rss));
    return;
  }
  if (d.spec?.paused || isScalingEvent(d, rss)) { await syncScale(ds, d, rss); return; }
  if (d.spec?.strategy?.type === 'Recreate') await rolloutRecreate(ds, d, rss);
  else await rolloutRolling(ds, d, rss);
}
