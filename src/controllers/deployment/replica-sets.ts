// Finding and maintaining a Deployment's ReplicaSets: the new one (template equal apart from
// pod-template-hash, oldest first), the old ones, revision bookkeeping, creating the new one
// and scaling with the desired/max-replicas annotations.

import type { Deployment, ReplicaSet } from '../../api/types.js';
import { isKdpError } from '../../errors.js';
import type { Client } from '../../client/types.js';
import type { EventRecorder } from '../../client/events.js';
import { inNs, REPLICASETS } from '../refs.js';
import { clone, ownerRefTo } from '../util.js';
import { computeHash, equalIgnoreHash, POD_TEMPLATE_HASH_LABEL } from './hash.js';
import {
  DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, maxRevision, resolveFenceposts,
  REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION, revisionOf, specReplicas,
} from './util.js';

const byCreation = (a: ReplicaSet, b: ReplicaSet) =>
  Date.parse(a.metadata.creationTimestamp ?? '') - Date.parse(b.metadata.creationTimestamp ?? '')
  || (a.metadata.name! < b.metadata.name! ? -1 : 1);

export function findNewReplicaSet(d: Deployment, rss: readonly ReplicaSet[]) {
  return [...rss].sort(byCreation)
    .find((rs) => equalIgnoreHash(rs.spec?.template, d.spec?.template));
}

export function findOldReplicaSets(d: Deployment, rss: readonly ReplicaSet[]): ReplicaSet[] {
  const n = findNewReplicaSet(d, rss);
  return rss.filter((r) => r !== n);
}

export const activeReplicaSets = (rss: readonly ReplicaSet[]) =>
  rss.filter((r) => specReplicas(r) > 0);

export interface RsOps {
  readonly client: Client;
  readonly recorder: EventRecorder;
  readonly now: () => string;
}

function withKind(d: Deployment): Deployment {
  return { ...d, apiVersion: 'apps/v1', kind: 'Deployment' };
}

/** Replicas annotations as upstream SetReplicasAnnotations. */
function replicasAnnotations(d: Deployment): Record<string, string> {
  const [surge] = resolveFenceposts(d);
  const r = d.spec?.replicas ?? 1;
  return { [DESIRED_REPLICAS_ANNOTATION]: String(r), [MAX_REPLICAS_ANNOTATION]: String(r + surge) };
}

/** Scales a ReplicaSet (update with its resourceVersion, so a stale cache conflicts). */
export async function scaleReplicaSet(
  ops: RsOps, d: Deployment, rs: ReplicaSet, replicas: number,
): Promise<ReplicaSet> {
  const ann = { ...(rs.metadata.annotations ?? {}), ...replicasAnnotations(d) };
  const from = specReplicas(rs);
  const sameAnn = JSON.stringify(ann) === JSON.stringify(rs.metadata.annotations ?? {});
  if (from === replicas && sameAnn) return rs;
  const out = await ops.client.update<ReplicaSet>(inNs(REPLICASETS, rs.metadata.namespace), {
    ...rs, metadata: { ...rs.metadata, annotations: ann }, spec: { ...rs.spec!, replicas },
  });
  if (from !== replicas) {
    ops.recorder.event(withKind(d), 'Normal', 'ScalingReplicaSet',
      `Scaled ${replicas > from ? 'up' : 'down'} replica set ${rs.metadata.name} from ${from} ` +
      `to ${replicas}`);
  }
  return out;
}

/**
 * The new ReplicaSet (revision synced to max(old)+1), created when `create` and missing.
 * Returns `collision` when a ReplicaSet with the hashed name but another template exists.
 */
export async function getNewReplicaSet(
  ops: RsOps, d: Deployment, rss: readonly ReplicaSet[], oldRSs: readonly ReplicaSet[],
  create: boolean, newReplicas: (d: Deployment) => number,
): Promise<{ rs?: ReplicaSet; created?: boolean; collision?: boolean }> {
  const existing = findNewReplicaSet(d, rss);
  const newRevision = String(maxRevision(oldRSs) + 1);
  if (existing) {
    const ann = { ...(existing.metadata.annotations ?? {}) };
    const cur = ann[REVISION_ANNOTATION];
    if (Number(cur ?? 0) >= Number(newRevision)) return { rs: existing };
    if (cur) {
      const hist = ann[REVISION_HISTORY_ANNOTATION];
      ann[REVISION_HISTORY_ANNOTATION] = hist ? `${hist},${cur}` : cur;
    }
    ann[REVISION_ANNOTATION] = newRevision;
    const rs = await ops.client.update<ReplicaSet>(inNs(REPLICASETS, d.metadata.namespace),
      { ...existing, metadata: { ...existing.metadata, annotations: ann } });
    return { rs };
  }
  if (!create) return {};
  const hash = computeHash(d.spec?.template, d.status?.collisionCount);
  const template = clone(d.spec!.template);
  template.metadata = { ...(template.metadata ?? {}),
    labels: { ...(template.metadata?.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash } };
  const sel = d.spec!.selector;
  const replicas = newReplicas(d);
  const rs: ReplicaSet = {
    apiVersion: 'apps/v1', kind: 'ReplicaSet',
    metadata: {
      name: `${d.metadata.name}-${hash}`, namespace: d.metadata.namespace,
      labels: { ...template.metadata.labels },
      annotations: { ...replicasAnnotations(d), [REVISION_ANNOTATION]: newRevision },
      ownerReferences: [ownerRefTo(d, 'apps/v1', 'Deployment')],
    },
    spec: {
      replicas, minReadySeconds: d.spec?.minReadySeconds ?? 0, template,
      selector: { ...sel,
        matchLabels: { ...(sel.matchLabels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash } },
    },
  };
  try {
    const made = await ops.client.create<ReplicaSet>(inNs(REPLICASETS, d.metadata.namespace), rs);
    if (replicas > 0) {
      ops.recorder.event(withKind(d), 'Normal', 'ScalingReplicaSet',
        `Scaled up replica set ${made.metadata.name} from 0 to ${replicas}`);
    }
    return { rs: made, created: true };
  } catch (e) {
    if (!isKdpError(e, 'KDP_ALREADY_EXISTS')) throw e;
    const other = await ops.client.get<ReplicaSet>(inNs(REPLICASETS, d.metadata.namespace),
      rs.metadata.name!);
    const ours = other.metadata.ownerReferences?.some((r) => r.uid === d.metadata.uid);
    if (ours && equalIgnoreHash(other.spec?.template, d.spec?.template)) return { rs: other };
    return { collision: true };
  }
}

export function sortByRevision(rss: readonly ReplicaSet[]): ReplicaSet[] {
  return [...rss].sort((a, b) => revisionOf(a) - revisionOf(b) || byCreation(a, b));
}
