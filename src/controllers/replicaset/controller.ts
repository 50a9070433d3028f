// The ReplicaSet controller: keeps `spec.replicas` active pods owned by each ReplicaSet (adopting
// matching orphans), creating pods named `<rs>-xxxxx` and deleting the least valuable first, and
// reports status (replicas, fullyLabeled, ready, available, observedGeneration). Creates and
// deletes are bounded by `burstReplicas` and tracked with expectations.

import type { Pod, ReplicaSet } from '../../api/types.js';
import { labelSelectorMatcher } from '../../api/selectors.js';
import { isKdpError } from '../../errors.js';
import { keyOf, objectKey, splitKey } from '../../client/cache.js';
import type { KubeObject } from '../../client/types.js';
import type { ControllerContext } from '../options.js';
import { inNs, PODS, REPLICASETS } from '../refs.js';
import { buildQueueController } from '../runner.js';
import { buildExpectations } from '../expectations.js';
import {
  controllerRef, isPodActive, isPodAvailable, isPodReady, type Controller,
} from '../util.js';
import { podFromTemplate, podsToDelete } from './pods.js';
import { LABEL_PAIR_INDEX, labelPairIndex, objectsMatchingMap } from '../label-index.js';

export const CONTROLLER_UID_INDEX = 'controllerUid';
export const controllerUidIndex = (p: KubeObject): string[] => {
  const r = controllerRef(p);
  return r ? [r.uid] : [];
};

export function buildReplicaSetController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const rsInf = ctx.informers.informerFor<ReplicaSet>(REPLICASETS);
  const podInf = ctx.informers.informerFor<Pod>(PODS, {
    indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndex, [LABEL_PAIR_INDEX]: labelPairIndex },
  });
  const recorder = ctx.recorder('replicaset-controller');
  const exp = buildExpectations(5 * 60_000, options.now);
  const byUid = new Map<string, string>(); // rs uid → key

  const c = buildQueueController('replicaset', options.workers, sync);
  const enqueue = (rs: ReplicaSet) => c.queue.add(objectKey(rs));

  rsInf.addEventHandler({
    onAdd: (rs) => { byUid.set(rs.metadata.uid!, objectKey(rs)); enqueue(rs); },
    onUpdate: (_, rs) => enqueue(rs),
    onDelete: (rs) => { byUid.delete(rs.metadata.uid!); exp.delete(objectKey(rs)); },
  });
  const ownerKey = (p: Pod) => {
    const r = controllerRef(p);
    return r?.kind === 'ReplicaSet' ? byUid.get(r.uid) : undefined;
  };
  podInf.addEventHandler({
    onAdd: (p) => {
      const k = ownerKey(p);
      if (k) { exp.creationObserved(k); c.queue.add(k); } else if (!controllerRef(p)) orphan(p);
    },
    onUpdate: (a, b) => {
      const k = ownerKey(b);
      if (k && b.metadata.deletionTimestamp && !a.metadata.deletionTimestamp) {
        exp.deletionObserved(k);
      }
      if (k) c.queue.add(k); else if (!controllerRef(b)) orphan(b);
      const ka = ownerKey(a);
      if (ka && ka !== k) c.queue.add(ka);
    },
    onDelete: (p) => {
      const k = ownerKey(p);
      if (!k) return;
      if (!p.metadata.deletionTimestamp) exp.deletionObserved(k);
      c.queue.add(k);
    },
  });

  function orphan(p: Pod): void {
    for (const rs of rsInf.cache.byIndex('namespace', p.metadata.namespace ?? '')) {
      if (labelSelectorMatcher(rs.spec?.selector).matches(p.metadata.labels)) enqueue(rs);
    }
  }

  async function sync(key: string): Promise<void> {
    const rs = rsInf.cache.get(key);
    if (!rs) { exp.delete(key); return; }
    const pods = await claimPods(rs);
    const active = pods.filter(isPodActive);
    if (exp.satisfied(key) && !rs.metadata.deletionTimestamp) await manage(key, rs, active);
    await updateStatus(rs, pods, active);
  }

  async function claimPods(rs: ReplicaSet): Promise<Pod[]> {
    const owned = podInf.cache.byIndex(CONTROLLER_UID_INDEX, rs.metadata.uid!);
    if (rs.metadata.deletionTimestamp) return owned;
    const sel = labelSelectorMatcher(rs.spec?.selector);
    const ml = rs.spec?.selector?.matchLabels ?? {};
    const candidates = Object.keys(ml).length
      ? objectsMatchingMap(podInf.cache, rs.metadata.namespace ?? '', ml)
      : podInf.cache.byIndex('namespace', rs.metadata.namespace ?? '');
    const orphans = candidates
      .filter((p) => !controllerRef(p) && !p.metadata.deletionTimestamp
        && sel.matches(p.metadata.labels));
    for (const p of orphans) {
      const refs = [...(p.metadata.ownerReferences ?? []), {
        apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs.metadata.name!,
        uid: rs.metadata.uid!, controller: true, blockOwnerDeletion: true,
      }];
      try {
        await client.patch(inNs(PODS, p.metadata.namespace), p.metadata.name!, 'merge',
          { metadata: { ownerReferences: refs, uid: p.metadata.uid } });
        owned.push(p);
      } catch (e) {
        if (!isKdpError(e, 'KDP_NOT_FOUND') && !isKdpError(e, 'KDP_CONFLICT')) throw e;
      }
    }
    return owned.filter((p) => sel.matches(p.metadata.labels) || controllerRef(p));
  }

  async function manage(key: string, rs: ReplicaSet, active: Pod[]): Promise<void> {
    const want = rs.spec?.replicas ?? 1;
    const diff = active.length - want;
    if (diff < 0) {
      const n = Math.min(-diff, options.burstReplicas);
      exp.expect(key, n, 0);
      await slowStart(n, async () => {
        const pod = podFromTemplate(rs.spec?.template, rs, 'apps/v1', 'ReplicaSet');
        try {
          const made = await client.create(inNs(PODS, rs.metadata.namespace), pod);
          recorder.event(withKind(rs), 'Normal', 'SuccessfulCreate',
            `Created pod: ${made.metadata.name}`);
        } catch (e) {
          exp.lower(key, 1, 0);
          recorder.event(withKind(rs), 'Warning', 'FailedCreate',
            `Error creating: ${(e as Error).message}`);
          throw e;
        }
      }, () => exp.lower(key, 1, 0));
    } else if (diff > 0) {
      const victims = podsToDelete(active, Math.min(diff, options.burstReplicas));
      exp.expect(key, 0, victims.length);
      await Promise.all(victims.map(async (p) => {
        try {
          await client.delete(inNs(PODS, p.metadata.namespace), p.metadata.name!);
          recorder.event(withKind(rs), 'Normal', 'SuccessfulDelete',
            `Deleted pod: ${p.metadata.name}`);
        } catch (e) {
          exp.lower(key, 0, 1);
          if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
        }
      }));
    }
  }

  async function updateStatus(rs: ReplicaSet, pods: Pod[], active: Pod[]): Promise<void> {
    const now = options.now();
    const minReady = rs.spec?.minReadySeconds ?? 0;
    const tmplLabels = rs.spec?.template?.metadata?.labels ?? {};
    const status = {
      replicas: active.length,
      fullyLabeledReplicas: active.filter((p) =>
        Object.entries(tmplLabels).every(([k, v]) => p.metadata.labels?.[k] === v)).length,
      readyReplicas: active.filter(isPodReady).length,
      availableReplicas: active.filter((p) => isPodAvailable(p, minReady, now)).length,
      terminatingReplicas: pods.filter((p) => p.metadata.deletionTimestamp).length,
      observedGeneration: rs.metadata.generation,
    };
    const cur = rs.status ?? { replicas: 0 };
    const same = cur.replicas === status.replicas
      && (cur.fullyLabeledReplicas ?? 0) === status.fullyLabeledReplicas
      && (cur.readyReplicas ?? 0) === status.readyReplicas
      && (cur.availableReplicas ?? 0) === status.availableReplicas
      && (cur.terminatingReplicas ?? 0) === status.terminatingReplicas
      && cur.observedGeneration === status.observedGeneration;
    if (!same) {
      try {
        await client.update(inNs(REPLICASETS, rs.metadata.namespace),
          { ...rs, status: { ...cur, ...status } }, { subresource: 'status' });
      } catch (e) {
        if (!isKdpError(e, 'KDP_NOT_FOUND') && !isKdpError(e, 'KDP_CONFLICT')) throw e;
        if (isKdpError(e, 'KDP_CONFLICT')) c.queue.add(objectKey(rs));
      }
    }
    // Pods becoming available after minReadySeconds produce no event: check back then.
    if (minReady > 0 && status.readyReplicas !== status.availableReplicas) {
      c.queue.addAfter(objectKey(rs), minReady * 1000 + 50);
    }
  }

  return {
    name: 'replicaset',
    start: c.start,
    stop: c.stop,
  };
}

/** Creates `n` things in batches of 1, 2, 4, ... stopping at the first failing batch. */
export async function slowStart(n: number, fn: () => Promise<void>, onSkip: () => void) {
  let done = 0;
  for (let batch = 1; done < n; batch *= 2) {
    const size = Math.min(batch, n - done);
    const res = await Promise.allSettled(Array.from({ length: size }, fn));
    done += size;
    const failed = res.find((r) => r.status === 'rejected');
    if (failed) {
      for (let i = done; i < n; i++) onSkip();
      if (!isKdpError((failed as PromiseRejectedResult).reason, 'KDP_FORBIDDEN')) {
        throw (failed as PromiseRejectedResult).reason;
      }
      return;
    }
  }
}

export function withKind<T extends ReplicaSet>(rs: T): T {
  return { ...rs, apiVersion: 'apps/v1', kind: 'ReplicaSet' };
}

export { keyOf, splitKey };
