// The steps of one Deployment sync that the rollouts share (controller.ts wires the informers
// and dispatches; rollout.ts holds the strategies, status.ts the status): adopting orphaned
// ReplicaSets, telling a scaling event from a rollout, finding (or creating) the new ReplicaSet
// and the old ones, and deleting old ReplicaSets beyond revisionHistoryLimit.

import type { Deployment, Pod, ReplicaSet } from '../../api/types.js';
import { labelSelectorMatcher } from '../../api/selectors.js';
import type { ObjectCache } from '../../client/cache.js';
import type { Client } from '../../client/types.js';
import { isKdpError } from '../../errors.js';
import { DEPLOYMENTS, inNs, REPLICASETS } from '../refs.js';
import { CONTROLLER_UID_INDEX } from '../replicaset/controller.js';
import { controllerRef } from '../util.js';
import {
  activeReplicaSets, findOldReplicaSets, getNewReplicaSet, sortByRevision, type RsOps,
} from './replica-sets.js';
import { newRSNewReplicas } from './rolling.js';
import { DESIRED_REPLICAS_ANNOTATION, REVISION_ANNOTATION, specReplicas } from './util.js';

/** What every step of a sync works with: the client, the ReplicaSet operations (with the
 *  clock and the event recorder), the informers' caches, and the queue to retry a key later. */
export interface DeploymentSync {
  readonly client: Client;
  readonly ops: RsOps;
  readonly replicaSets: ObjectCache<ReplicaSet>;
  readonly pods: ObjectCache<Pod>;
  requeueAfter(key: string, ms: number): void;
}

/** Adopts the ReplicaSets its selector matches that no controller owns; returns all it owns. */
export async function claimReplicaSets(ds: DeploymentSync, d: Deployment): Promise<ReplicaSet[]> {
  const owned = ds.replicaSets.byIndex(CONTROLLER_UID_INDEX, d.metadata.uid!);
  const sel = labelSelectorMatcher(d.spec?.selector);
  for (const rs of ds.replicaSets.byIndex('namespace', d.metadata.namespace ?? '')) {
    if (controllerRef(rs) || rs.metadata.deletionTimestamp || !sel.matches(rs.metadata.labels)) {
      continue;
    }
    try {
      const refs = [...(rs.metadata.ownerReferences ?? []), { apiVersion: 'apps/v1',
        kind: 'Deployment', name: d.metadata.name!, uid: d.metadata.uid!, controller: true,
        blockOwnerDeletion: true }];
      owned.push(await ds.client.patch<ReplicaSet>(inNs(REPLICASETS, rs.metadata.namespace),
        rs.metadata.name!, 'merge', { metadata: { ownerReferences: refs } }));
    } catch (e) {
      if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
    }
  }
  return owned;
}

export function isScalingEvent(d: Deployment, rss: ReplicaSet[]): boolean {
  const want = String(d.spec?.replicas ?? 1);
  return activeReplicaSets(rss).some((rs) => {
    const a = rs.metadata.annotations?.[DESIRED_REPLICAS_ANNOTATION];
    return a !== undefined && a !== want;
  });
}

export async function newAndOld(ds: DeploymentSync, d: Deployment, rss: ReplicaSet[], create: boolean) {
  const old = findOldReplicaSets(d, rss);
  const res = await getNewReplicaSet(ds.ops, d, rss, old, create,
    (dd) => newRSNewReplicas(dd, rss, undefined));
  if (res.collision) {
    await ds.client.update(inNs(DEPLOYMENTS, d.metadata.namespace), {
      ...d, status: { ...(d.status ?? {}), collisionCount: (d.status?.collisionCount ?? 0) + 1 },
    }, { subresource: 'status' });
    throw new Error(`hash collision for deployment ${d.metadata.name}`);
  }
  if (res.rs) await syncDeploymentRevision(ds, d, res.rs);
  return { newRS: res.rs, old, created: !!res.created };
}

export async function syncDeploymentRevision(ds: DeploymentSync, d: Deployment, rs: ReplicaSet): Promise<void> {
  const rev = rs.metadata.annotations?.[REVISION_ANNOTATION];
  if (!rev || d.metadata.annotations?.[REVISION_ANNOTATION] === rev) return;
  await ds.client.patch(inNs(DEPLOYMENTS, d.metadata.namespace), d.metadata.name!, 'merge',
    { metadata: { annotations: { [REVISION_ANNOTATION]: rev } } });
}

export async function cleanup(ds: DeploymentSync, d: Deployment, old: ReplicaSet[]): Promise<void> {
  const limit = d.spec?.revisionHistoryLimit ?? 10;
  const idle = sortByRevision(old.filter((rs) => specReplicas(rs) === 0
    && (rs.status?.replicas ?? 0) === 0 && !rs.metadata.deletionTimestamp));
  for (const rs of idle.slice(0, Math.max(0, idle.length - limit))) {
    try {
      await ds.client.delete(inNs(REPLICASETS, rs.metadata.namespace), rs.metadata.name!);
    } catch (e) { if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e; }
  }
}
