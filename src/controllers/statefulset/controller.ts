// The StatefulSet controller, as upstream's pkg/controller/statefulset (v1.33): pods
// `<name>-<ordinal>` with hostname = pod name and subdomain = serviceName, labelled
// `statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index` and
// `controller-revision-hash` (`<name>-<template hash>`). OrderedReady creates ordinal i only once
// 0..i-1 are Running and Ready (and available for minReadySeconds) and removes surplus pods from
// the highest ordinal, one at a time; Parallel does both at once. A missing pod is recreated under
// its name; a Failed or Succeeded pod is deleted and recreated. RollingUpdate replaces pods from the
// highest ordinal down to `partition`, one at a time, each waiting for its predecessor's
// replacement to be Running and Ready; OnDelete replaces only deleted pods. Status and events as
// upstream ("create Pod web-0 in StatefulSet web successful").
// Each template is kept as a ControllerRevision `<name>-<hash>` (labels: the template's plus
// `controller.kubernetes.io/hash`; data: the template as a strategic-merge patch with
// `$patch: replace`; revision numbers increasing, a template that returns takes the next number),
// pruned beyond revisionHistoryLimit, so `kubectl rollout history/undo sts` work.

import type {
  ControllerRevision, Pod, PodTemplateSpec, StatefulSet, StatefulSetStatus,
} from '../../api/types.js';
import { labelSelectorMatcher } from '../../api/selectors.js';
import { objectKey } from '../../client/cache.js';
import { isKdpError } from '../../errors.js';
import { templateHash } from '../daemonset/controller.js';
import type { ControllerContext } from '../options.js';
import { inNs, PODS } from '../refs.js';
import { CONTROLLER_UID_INDEX, controllerUidIndex } from '../replicaset/controller.js';
import { podFromTemplate } from '../replicaset/pods.js';
import { buildQueueController } from '../runner.js';
import { clone, controllerRef, isPodAvailable, isPodReady, ownerRefTo, type Controller } from '../util.js';

export const STATEFULSETS = { group: 'apps', version: 'v1', resource: 'statefulsets' } as const;
export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
export const REVISION_LABEL = 'controller-revision-hash';
export const CONTROLLER_REVISIONS = { group: 'apps', version: 'v1', resource: 'controllerrevisions' } as const;
export const HASH_LABEL = 'controller.kubernetes.io/hash';

/** The template a revision's data holds (`{spec: {template: {..., $patch: replace}}}`). */
export function revisionTemplate(r: ControllerRevision): PodTemplateSpec | undefined {
  const t = (r.data as { spec?: { template?: PodTemplateSpec & { $patch?: string } } } | undefined)?.spec?.template;
  if (!t) return undefined;
  const { $patch: _, ...rest } = t;
  return rest;
}

/** The ordinal of a pod named `<set>-<n>`, or -1. */
export function ordinalOf(set: string, pod: string): number {
  if (!pod.startsWith(`${set}-`)) return -1;
  const rest = pod.slice(set.length + 1);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : -1;
}

const isRunningAndReady = (p: Pod) => p.status?.phase === 'Running' && isPodReady(p);
const isTerminating = (p: Pod) => !!p.metadata.deletionTimestamp;
const isFailedOrDone = (p: Pod) => p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded';

export function buildStatefulSetController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const setInf = ctx.informers.informerFor<StatefulSet>(STATEFULSETS);
  const podInf = ctx.informers.informerFor<Pod>(PODS, { indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndex } });
  const revInf = ctx.informers.informerFor<ControllerRevision>(CONTROLLER_REVISIONS,
    { indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndex } });
  const recorder = ctx.recorder('statefulset-controller');
  const byUid = new Map<string, string>();
  /** Revision name → template, per StatefulSet key: the ControllerRevisions' templates, plus the
   *  update revision's before its revision object is in the cache. */
  const revisions = new Map<string, Map<string, PodTemplateSpec>>();
  const c = buildQueueController('statefulset', options.workers, sync);

  setInf.addEventHandler({
    onAdd: (s) => { byUid.set(s.metadata.uid!, objectKey(s)); c.queue.add(objectKey(s)); },
    onUpdate: (_, s) => c.queue.add(objectKey(s)),
    onDelete: (s) => { byUid.delete(s.metadata.uid!); revisions.delete(objectKey(s)); },
  });
  const owner = (p: Pod) => {
    const r = controllerRef(p);
    return r?.kind === 'StatefulSet' ? byUid.get(r.uid) : undefined;
  };
  const onPod = (p: Pod) => { const k = owner(p); if (k) c.queue.add(k); };
  podInf.addEventHandler({ onAdd: onPod, onUpdate: (_, p) => onPod(p), onDelete: onPod });
  const onRev = (r: ControllerRevision) => {
    const ref = controllerRef(r);
    const k = ref?.kind === 'StatefulSet' ? byUid.get(ref.uid) : undefined;
    if (k) c.queue.add(k);
  };
  revInf.addEventHandler({ onAdd: onRev, onDelete: onRev });

  /** Upstream's revision bookkeeping: create the update revision, or renumber a returning one. */
  async function syncRevisions(set: StatefulSet, hash: string, name: string, owned: ControllerRevision[]): Promise<void> {
    const ns = set.metadata.namespace;
    const max = owned.reduce((m, r) => Math.max(m, r.revision ?? 0), 0);
    const existing = owned.find((r) => r.metadata.name === name);
    if (!existing) {
      const template = clone(set.spec!.template);
      const rev: ControllerRevision = { apiVersion: 'apps/v1', kind: 'ControllerRevision',
        metadata: { name, namespace: ns, labels: { ...(template.metadata?.labels ?? {}), [HASH_LABEL]: hash },
          ownerReferences: [{ ...ownerRefTo(set, 'apps/v1', 'StatefulSet') }] },
        data: { spec: { template: { ...template, $patch: 'replace' } } }, revision: max + 1 };
      await client.create(inNs(CONTROLLER_REVISIONS, ns), rev).catch((e) => {
        if (!isKdpError(e, 'KDP_ALREADY_EXISTS')) throw e;
      });
    } else if ((existing.revision ?? 0) < max) {
      await client.patch(inNs(CONTROLLER_REVISIONS, ns), name, 'merge', { revision: max + 1 })
        .catch((e) => { if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e; });
    }
  }

  /** Upstream truncateHistory: keep live revisions and the newest revisionHistoryLimit others. */
  async function truncateHistory(set: StatefulSet, owned: ControllerRevision[], live: Set<string>): Promise<void> {
    const limit = set.spec?.revisionHistoryLimit ?? 10;
    const old = owned.filter((r) => !live.has(r.metadata.name!)).sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
    for (const r of old.slice(0, Math.max(0, old.length - limit))) {
      await client.delete(inNs(CONTROLLER_REVISIONS, set.metadata.namespace), r.metadata.name!)
        .catch((e) => { if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e; });
    }
  }

  const withKind = (s: StatefulSet) => ({ ...s, apiVersion: 'apps/v1', kind: 'StatefulSet' });

  async function createPod(set: StatefulSet, ord: number, rev: string, tmpl: PodTemplateSpec | undefined): Promise<void> {
    const name = `${set.metadata.name}-${ord}`;
    const pod = podFromTemplate(tmpl, set, 'apps/v1', 'StatefulSet');
    delete pod.metadata.generateName;
    pod.metadata.name = name;
    pod.metadata.labels = { ...pod.metadata.labels, [POD_NAME_LABEL]: name,
      [POD_INDEX_LABEL]: String(ord), [REVISION_LABEL]: rev };
    pod.spec!.hostname = name;
    if (set.spec?.serviceName) pod.spec!.subdomain = set.spec.serviceName;
    try {
      await client.create<Pod>(inNs(PODS, set.metadata.namespace), pod);
    } catch (e) {
      if (isKdpError(e, 'KDP_ALREADY_EXISTS')) return; // our cache is behind; the next sync sees it
      recorder.event(withKind(set), 'Warning', 'FailedCreate',
        `create Pod ${name} in StatefulSet ${set.metadata.name} failed error: ${(e as Error).message}`);
      throw e;
    }
    recorder.event(withKind(set), 'Normal', 'SuccessfulCreate',
      `create Pod ${name} in StatefulSet ${set.metadata.name} successful`);
  }

  async function deletePod(set: StatefulSet, p: Pod): Promise<void> {
    try {
      await client.delete(inNs(PODS, p.metadata.namespace), p.metadata.name!);
    } catch (e) {
      if (isKdpError(e, 'KDP_NOT_FOUND')) return;
      recorder.event(withKind(set), 'Warning', 'FailedDelete',
        `delete Pod ${p.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${(e as Error).message}`);
      throw e;
    }
    recorder.event(withKind(set), 'Normal', 'SuccessfulDelete',
      `delete Pod ${p.metadata.name} in StatefulSet ${set.metadata.name} successful`);
  }

  async function sync(key: string): Promise<void> {
    const set = setInf.cache.get(key);
    if (!set || set.metadata.deletionTimestamp) return;
    const spec = set.spec!;
    const name = set.metadata.name!;
    const now = options.now();
    const minReady = spec.minReadySeconds ?? 0;
    const selector = labelSelectorMatcher(spec.selector);
    const pods = podInf.cache.byIndex(CONTROLLER_UID_INDEX, set.metadata.uid!)
      .filter((p) => selector.matches(p.metadata.labels) && ordinalOf(name, p.metadata.name!) >= 0);

    const hash = templateHash(spec.template, set.status?.collisionCount ?? 0);
    const updateRevision = `${name}-${hash}`;
    let revs = revisions.get(key);
    if (!revs) revisions.set(key, (revs = new Map()));
    const owned = revInf.cache.byIndex(CONTROLLER_UID_INDEX, set.metadata.uid!);
    for (const r of owned) {
      const t = revisionTemplate(r);
      if (t && !revs.has(r.metadata.name!)) revs.set(r.metadata.name!, t);
    }
    revs.set(updateRevision, spec.template);
    await syncRevisions(set, hash, updateRevision, owned);
    let currentRevision = set.status?.currentRevision ?? updateRevision;
    if (!revs.has(currentRevision)) currentRevision = updateRevision;
    // Forget revisions no pod uses any more.
    const used = new Set([updateRevision, currentRevision, ...pods.map((p) => p.metadata.labels?.[REVISION_LABEL] ?? '')]);
    for (const r of revs.keys()) if (!used.has(r)) revs.delete(r);
    await truncateHistory(set, owned, used);

    const start = spec.ordinals?.start ?? 0;
    const replicaCount = spec.replicas ?? 1;
    const monotonic = (spec.podManagementPolicy ?? 'OrderedReady') !== 'Parallel';
    const rolling = (spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
    const partition = rolling ? spec.updateStrategy?.rollingUpdate?.partition ?? 0 : 0;
    const replicas: Array<Pod | undefined> = new Array(replicaCount).fill(undefined);
    const condemned: Pod[] = [];
    for (const p of pods) {
      const ord = ordinalOf(name, p.metadata.name!);
      if (ord >= start && ord < start + replicaCount) replicas[ord - start] = p;
      else condemned.push(p);
    }
    condemned.sort((a, b) => ordinalOf(name, b.metadata.name!) - ordinalOf(name, a.metadata.name!));

    const revisionFor = (ord: number): string =>
      rolling && ord < start + partition ? currentRevision : updateRevision;
    const healthy = (p: Pod) => isRunningAndReady(p) && isPodAvailable(p, minReady, now);

    await (async () => {
      // Replicas in ordinal order: replace failed ones, create missing ones, wait (OrderedReady).
      for (let i = 0; i < replicas.length; i++) {
        const p = replicas[i];
        const ord = start + i;
        if (p && isFailedOrDone(p) && !isTerminating(p)) {
          await deletePod(set, p);
          if (monotonic) return;
          continue;
        }
        if (!p) {
          const rev = revisionFor(ord);
          await createPod(set, ord, rev, revs!.get(rev));
          if (monotonic) return;
          continue;
        }
        if (monotonic && (isTerminating(p) || !healthy(p))) return;
      }
      // Surplus ordinals, highest first.
      for (const p of condemned) {
        if (isTerminating(p)) { if (monotonic) return; continue; }
        await deletePod(set, p);
        if (monotonic) return;
      }
      if (!rolling) return;
      // Rolling update: highest ordinal first, down to the partition, one at a time.
      for (let i = replicas.length - 1; i >= partition; i--) {
        const p = replicas[i];
        if (!p) return;
        if (p.metadata.labels?.[REVISION_LABEL] !== updateRevision && !isTerminating(p)) {
          await deletePod(set, p);
          return;
        }
        if (!healthy(p) || isTerminating(p)) return;
      }
    })();

    // Status (upstream computeReplicaStatus + completeRollingUpdate).
    const all = [...replicas.filter((p): p is Pod => !!p), ...condemned];
    const status: StatefulSetStatus = { observedGeneration: set.metadata.generation, replicas: 0,
      readyReplicas: 0, currentReplicas: 0, updatedReplicas: 0, availableReplicas: 0,
      currentRevision, updateRevision, collisionCount: set.status?.collisionCount ?? 0 };
    for (const p of all) {
      if (p.status?.phase) status.replicas++;
      if (isRunningAndReady(p)) {
        status.readyReplicas!++;
        if (isPodAvailable(p, minReady, now)) status.availableReplicas!++;
      }
      if (p.status?.phase && !isTerminating(p)) {
        const r = p.metadata.labels?.[REVISION_LABEL];
        if (r === currentRevision) status.currentReplicas!++;
        if (r === updateRevision) status.updatedReplicas!++;
      }
    }
    if (rolling && status.updatedReplicas === status.replicas && status.readyReplicas === status.replicas) {
      status.currentReplicas = status.updatedReplicas;
      status.currentRevision = updateRevision;
    }
    if (minReady > 0 && status.readyReplicas! > status.availableReplicas!) {
      c.queue.addAfter(key, minReady * 1000);
    }
    const cur = (set.status ?? {}) as unknown as Record<string, unknown>;
    if (Object.entries(status).some(([k, v]) => (cur[k] ?? 0) !== (v ?? 0))) {
      await client.patch(inNs(STATEFULSETS, set.metadata.namespace), name, 'merge',
        { status }, { subresource: 'status' }).catch((e) => { if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e; });
    }
  }

  return { name: 'statefulset', start: c.start, stop: c.stop };
}
