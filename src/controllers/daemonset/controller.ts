// The DaemonSet controller, as upstream's pkg/controller/daemon: one pod per node that should
// run it (the template's nodeSelector and required node affinity match, and the node's
// NoSchedule/NoExecute taints are tolerated with the tolerations every daemon pod gets), none
// elsewhere. Pods are created for the default scheduler with a required node affinity on the
// node's name (matchFields metadata.name), carry `controller-revision-hash` (a hash of the
// template) and `pod-template-generation`, and are replaced by a rolling update honouring
// maxUnavailable (default 1) and maxSurge, or only when deleted with OnDelete. Failed pods are
// killed and recreated. Status as upstream's (desired/current/misscheduled/ready/updated/
// available/unavailable, observedGeneration), events SuccessfulCreate/SuccessfulDelete/
// FailedDaemonPod. Each template is kept as a ControllerRevision `<name>-<hash>` (data: the
// template with `$patch: replace`, revision numbers increasing, a template that returns takes
// the next number, pruned beyond revisionHistoryLimit), so `kubectl rollout history/undo ds`
// work.

import { createHash } from 'node:crypto';
import type {
  ControllerRevision, DaemonSet, DaemonSetStatus, Node, Pod, PodTemplateSpec, Toleration,
} from '../../api/types.js';
import { labelSelectorMatcher } from '../../api/selectors.js';
import { objectKey } from '../../client/cache.js';
import { isKdpError } from '../../errors.js';
import { firstUntoleratedTaint, podMatchesNodeSelectorAndAffinity } from '../../api/node-affinity.js';
import { buildExpectations } from '../expectations.js';
import type { ControllerContext } from '../options.js';
import { inNs, NODES, PODS } from '../refs.js';
import { CONTROLLER_UID_INDEX, controllerUidIndex, slowStart } from '../replicaset/controller.js';
import { podFromTemplate } from '../replicaset/pods.js';
import { buildQueueController } from '../runner.js';
import { clone, controllerRef, isPodAvailable, isPodReady, ownerRefTo, type Controller } from '../util.js';
import { CONTROLLER_REVISIONS } from '../statefulset/controller.js';

export const DAEMONSETS = { group: 'apps', version: 'v1', resource: 'daemonsets' } as const;
export const REVISION_HASH_LABEL = 'controller-revision-hash';
export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

/** Tolerations every daemon pod gets (upstream AddOrUpdateDaemonPodTolerations). */
export function daemonPodTolerations(template: PodTemplateSpec | undefined): Toleration[] {
  const list = [...(template?.spec?.tolerations ?? [])];
  const add = (key: string, effect: Toleration['effect']) => {
    if (!list.some((t) => t.key === key && t.effect === effect && t.operator === 'Exists')) {
      list.push({ key, operator: 'Exists', effect });
    }
  };
  add('node.kubernetes.io/not-ready', 'NoExecute');
  add('node.kubernetes.io/unreachable', 'NoExecute');
  add('node.kubernetes.io/disk-pressure', 'NoSchedule');
  add('node.kubernetes.io/memory-pressure', 'NoSchedule');
  add('node.kubernetes.io/pid-pressure', 'NoSchedule');
  add('node.kubernetes.io/unschedulable', 'NoSchedule');
  if (template?.spec?.hostNetwork) add('node.kubernetes.io/network-unavailable', 'NoSchedule');
  return list;
}

/** The template's hash: the `controller-revision-hash` of its pods (fnv-style, short, stable). */
export function templateHash(template: PodTemplateSpec | undefined, collisionCount = 0): string {
  const h = createHash('sha256').update(JSON.stringify(template ?? {})).update(String(collisionCount)).digest();
  // Upstream's SafeEncodeString alphabet (no vowels, no look-alikes), 10 characters.
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let out = '';
  for (let i = 0; i < 10; i++) out += alphabet[h[i]! % alphabet.length];
  return out;
}

/** The node a daemon pod is for: spec.nodeName, or its matchFields metadata.name affinity. */
export function targetNode(pod: Pod): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const t of terms) {
    for (const f of t.matchFields ?? []) {
      if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0];
    }
  }
  return undefined;
}

/** Whether the daemon should run on `node`, and keep running there (upstream NodeShouldRunDaemonPod). */
export function nodeShouldRun(ds: DaemonSet, node: Node): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const tmpl = ds.spec?.template;
  if (tmpl?.spec?.nodeName && tmpl.spec.nodeName !== node.metadata.name) {
    return { shouldRun: false, shouldContinueRunning: false };
  }
  const pod = { spec: { ...(tmpl?.spec ?? { containers: [] }), tolerations: daemonPodTolerations(tmpl) } } as Pod;
  if (!podMatchesNodeSelectorAndAffinity(pod, node)) return { shouldRun: false, shouldContinueRunning: false };
  const tol = pod.spec!.tolerations;
  const noExecute = firstUntoleratedTaint(node.spec?.taints, tol, ['NoExecute']);
  const noSchedule = firstUntoleratedTaint(node.spec?.taints, tol, ['NoSchedule']);
  return { shouldRun: !noExecute && !noSchedule, shouldContinueRunning: !noExecute };
}

function intOrPercent(v: number | string | undefined, total: number, dflt: number, roundUp: boolean): number {
  if (v === undefined) return dflt;
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  if (!m) return Number(v) || 0;
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

export function buildDaemonSetController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const dsInf = ctx.informers.informerFor<DaemonSet>(DAEMONSETS);
  const nodeInf = ctx.informers.informerFor<Node>(NODES);
  const podInf = ctx.informers.informerFor<Pod>(PODS, { indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndex } });
  const recorder = ctx.recorder('daemonset-controller');
  const exp = buildExpectations(5 * 60_000, options.now);
  const byUid = new Map<string, string>();
  const revInf = ctx.informers.informerFor<ControllerRevision>(CONTROLLER_REVISIONS,
    { indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndex } });
  const c = buildQueueController('daemonset', options.workers, sync);
  // nodeShouldRun per (node object, DaemonSet generation): a sync walks every node, and a roll-out
  // syncs on every pod event, so at 1,000 nodes recomputing selectors and taints each time was
  // most of the controller's CPU. Informer caches replace a node's object when it changes, so a
  // changed node misses the cache by identity.
  const shouldRunCache = new WeakMap<Node, Map<string, ReturnType<typeof nodeShouldRun>>>();
  const shouldRunOn = (ds: DaemonSet, node: Node) => {
    let perNode = shouldRunCache.get(node);
    if (!perNode) shouldRunCache.set(node, perNode = new Map());
    const k = `${ds.metadata.uid}/${ds.metadata.generation ?? 0}`;
    let r = perNode.get(k);
    if (!r) perNode.set(k, r = nodeShouldRun(ds, node));
    return r;
  };
  const enqueueAll = () => { for (const ds of dsInf.cache.list()) c.queue.add(objectKey(ds)); };

  dsInf.addEventHandler({
    onAdd: (ds) => { byUid.set(ds.metadata.uid!, objectKey(ds)); c.queue.add(objectKey(ds)); },
    onUpdate: (_, ds) => c.queue.add(objectKey(ds)),
    onDelete: (ds) => { byUid.delete(ds.metadata.uid!); exp.delete(objectKey(ds)); },
  });
  // A node's labels, taints or arrival change which daemons it should run.
  nodeInf.addEventHandler({ onAdd: enqueueAll, onUpdate: (a, b) => {
    if (JSON.stringify([a.metadata.labels, a.spec?.taints]) !== JSON.stringify([b.metadata.labels, b.spec?.taints])) enqueueAll();
  }, onDelete: enqueueAll });
  const owner = (p: Pod) => {
    const r = controllerRef(p);
    return r?.kind === 'DaemonSet' ? byUid.get(r.uid) : undefined;
  };
  podInf.addEventHandler({
    onAdd: (p) => { const k = owner(p); if (k) { exp.creationObserved(k); c.queue.add(k); } },
    onUpdate: (a, p) => {
      const k = owner(p);
      if (k && p.metadata.deletionTimestamp && !a.metadata.deletionTimestamp) exp.deletionObserved(k);
      if (k) c.queue.add(k);
    },
    onDelete: (p) => {
      const k = owner(p);
      if (!k) return;
      if (!p.metadata.deletionTimestamp) exp.deletionObserved(k);
      c.queue.add(k);
    },
  });

  async function createPod(ds: DaemonSet, node: string, hash: string): Promise<void> {
    const pod = podFromTemplate(ds.spec?.template, ds, 'apps/v1', 'DaemonSet');
    pod.metadata.labels = { ...pod.metadata.labels, [REVISION_HASH_LABEL]: hash,
      [TEMPLATE_GENERATION_LABEL]: String(ds.metadata.generation ?? 1) };
    const spec = pod.spec!;
    spec.tolerations = daemonPodTolerations(ds.spec?.template);
    // Upstream ReplaceDaemonSetPodNodeNameNodeAffinity: the default scheduler binds it.
    const affinity = clone(spec.affinity ?? {});
    const na = affinity.nodeAffinity ?? {};
    na.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: [{
      matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }] };
    affinity.nodeAffinity = na;
    spec.affinity = affinity;
    const made = await client.create<Pod>(inNs(PODS, ds.metadata.namespace), pod);
    recorder.event(withKind(ds), 'Normal', 'SuccessfulCreate', `Created pod: ${made.metadata.name}`);
  }

  async function deletePod(ds: DaemonSet, p: Pod): Promise<void> {
    await client.delete(inNs(PODS, p.metadata.namespace), p.metadata.name!).catch((e) => {
      if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
    });
    recorder.event(withKind(ds), 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name}`);
  }

  /** Upstream's revision bookkeeping (as the StatefulSet controller's): the current template's
   *  revision exists and is the newest; old ones beyond revisionHistoryLimit go unless in use. */
  async function syncRevisions(ds: DaemonSet, hash: string, live: Set<string>): Promise<void> {
    const ns = ds.metadata.namespace;
    const name = `${ds.metadata.name}-${hash}`;
    const owned = revInf.cache.byIndex(CONTROLLER_UID_INDEX, ds.metadata.uid!);
    const max = owned.reduce((m, r) => Math.max(m, r.revision ?? 0), 0);
    const existing = owned.find((r) => r.metadata.name === name);
    if (!existing) {
      const template = clone(ds.spec!.template);
      await client.create(inNs(CONTROLLER_REVISIONS, ns), { apiVersion: 'apps/v1', kind: 'ControllerRevision',
        metadata: { name, namespace: ns, labels: { ...(template.metadata?.labels ?? {}), [REVISION_HASH_LABEL]: hash },
          ownerReferences: [ownerRefTo(ds, 'apps/v1', 'DaemonSet')] },
        data: { spec: { template: { ...template, $patch: 'replace' } } }, revision: max + 1 } as ControllerRevision)
        .catch((e) => { if (!isKdpError(e, 'KDP_ALREADY_EXISTS')) throw e; });
    } else if ((existing.revision ?? 0) < max) {
      await client.patch(inNs(CONTROLLER_REVISIONS, ns), name, 'merge', { revision: max + 1 })
        .catch((e) => { if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e; });
    }
    const limit = ds.spec?.revisionHistoryLimit ?? 10;
    const old = owned.filter((r) => r.metadata.name !== name && !live.has(r.metadata.labels?.[REVISION_HASH_LABEL] ?? ''))
      .sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
    for (const r of old.slice(0, Math.max(0, old.length - limit))) {
      await client.delete(inNs(CONTROLLER_REVISIONS, ns), r.metadata.name!)
        .catch((e) => { if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e; });
    }
  }

  async function sync(key: string): Promise<void> {
    const ds = dsInf.cache.get(key);
    if (!ds) { exp.delete(key); return; }
    const selector = labelSelectorMatcher(ds.spec?.selector);
    const pods = podInf.cache.byIndex(CONTROLLER_UID_INDEX, ds.metadata.uid!)
      .filter((p) => selector.matches(p.metadata.labels));
    const hash = templateHash(ds.spec?.template, ds.status?.collisionCount ?? 0);
    await syncRevisions(ds, hash, new Set(pods.map((p) => p.metadata.labels?.[REVISION_HASH_LABEL] ?? '')));
    const now = options.now();
    const minReady = ds.spec?.minReadySeconds ?? 0;
    const nodes = nodeInf.cache.list();
    const byNode = new Map<string, Pod[]>();
    for (const p of pods) {
      const n = targetNode(p);
      if (n) byNode.set(n, [...(byNode.get(n) ?? []), p]);
    }
    const creates: string[] = [];
    const deletes: Pod[] = [];
    const status: DaemonSetStatus = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0,
      numberReady: 0, updatedNumberScheduled: 0, numberAvailable: 0, numberUnavailable: 0 };
    const rollable: Array<{ node: string; old: Pod[]; fresh: Pod[] }> = [];
    for (const node of nodes) {
      const name = node.metadata.name!;
      const { shouldRun, shouldContinueRunning } = shouldRunOn(ds, node);
      const here = (byNode.get(name) ?? []).filter((p) => !p.metadata.deletionTimestamp);
      byNode.delete(name);
      if (shouldRun) status.desiredNumberScheduled++;
      if (here.length > 0 && !shouldRun) status.numberMisscheduled++;
      if (here.length > 0 && shouldRun) status.currentNumberScheduled++;
      if (!shouldContinueRunning) { deletes.push(...here); continue; }
      if (!shouldRun && here.length === 0) continue;
      const failed = here.filter((p) => p.status?.phase === 'Failed');
      for (const f of failed) {
        recorder.event(withKind(ds), 'Warning', 'FailedDaemonPod',
          `Found failed daemon pod ${f.metadata.namespace}/${f.metadata.name} on node ${name}, will try to kill it`);
      }
      deletes.push(...failed);
      const alive = here.filter((p) => p.status?.phase !== 'Failed');
      if (shouldRun && alive.length === 0) { creates.push(name); continue; }
      const fresh = alive.filter((p) => p.metadata.labels?.[REVISION_HASH_LABEL] === hash);
      const old = alive.filter((p) => p.metadata.labels?.[REVISION_HASH_LABEL] !== hash);
      const best = (fresh.find((p) => isPodAvailable(p, minReady, now)) ?? alive.find((p) => isPodAvailable(p, minReady, now)));
      if (shouldRun) {
        if (alive.some(isPodReady)) status.numberReady++;
        if (best) status.numberAvailable!++;
        if (fresh.length > 0) status.updatedNumberScheduled!++;
      }
      // More than one pod of the current revision (or extra old ones beside a new one): keep the
      // oldest current pod, as upstream keeps the oldest.
      if (fresh.length > 1) {
        const keep = [...fresh].sort((a, b) => Date.parse(a.metadata.creationTimestamp ?? '') - Date.parse(b.metadata.creationTimestamp ?? ''))[0]!;
        deletes.push(...fresh.filter((p) => p !== keep));
      }
      if (old.length > 0) rollable.push({ node: name, old, fresh });
    }
    // Pods bound to nodes that no longer exist.
    for (const rest of byNode.values()) deletes.push(...rest.filter((p) => !p.metadata.deletionTimestamp));
    status.numberUnavailable = status.desiredNumberScheduled - status.numberAvailable!;

    // Rolling update (upstream rollingUpdate): old pods go once their node has an available new
    // one (surge), else within the maxUnavailable budget, unavailable old ones first.
    const strategy = ds.spec?.updateStrategy;
    if ((strategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
      const desired = status.desiredNumberScheduled;
      const maxSurge = intOrPercent(strategy?.rollingUpdate?.maxSurge, desired, 0, true);
      const maxUnavailable = maxSurge > 0 ? intOrPercent(strategy?.rollingUpdate?.maxUnavailable, desired, 0, true)
        : Math.max(1, intOrPercent(strategy?.rollingUpdate?.maxUnavailable, desired, 1, true));
      let budget = maxUnavailable - status.numberUnavailable;
      let surge = maxSurge - rollable.filter((r) => r.fresh.length > 0).length;
      const sorted = [...rollable].sort((a, b) =>
        Number(a.old.some((p) => isPodAvailable(p, minReady, now))) - Number(b.old.some((p) => isPodAvailable(p, minReady, now))));
      for (const r of sorted) {
        const oldAvailable = r.old.some((p) => isPodAvailable(p, minReady, now));
        const freshAvailable = r.fresh.some((p) => isPodAvailable(p, minReady, now));
        if (freshAvailable || !oldAvailable) { deletes.push(...r.old); continue; }
        if (r.fresh.length > 0) continue; // surge pod starting: wait for it
        if (maxSurge > 0 && surge > 0) { creates.push(r.node); surge--; continue; }
        if (budget > 0) { deletes.push(...r.old); budget--; }
      }
    }

    if (exp.satisfied(key) && (creates.length || deletes.length)) {
      // Upstream syncNodes: at most burstReplicas of each per sync (the rest on the next one),
      // creates in slow-start batches (1, 2, 4, …; a failing batch stops the rest), deletes at once.
      const toCreate = creates.slice(0, options.burstReplicas);
      const toDelete = deletes.slice(0, options.burstReplicas);
      exp.expect(key, toCreate.length, toDelete.length);
      let next = 0;
      await slowStart(toCreate.length, () => createPod(ds, toCreate[next++]!, hash)
        .catch((e) => { exp.lower(key, 1, 0); throw e; }), () => exp.lower(key, 1, 0));
      const failed = (await Promise.allSettled(toDelete.map((p) => deletePod(ds, p)
        .catch((e) => { exp.lower(key, 0, 1); throw e; })))).find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
      if (creates.length > toCreate.length || deletes.length > toDelete.length) c.queue.add(key);
    }
    status.observedGeneration = ds.metadata.generation;
    status.collisionCount = ds.status?.collisionCount;
    const cur = ds.status ?? ({} as DaemonSetStatus);
    const fields = ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady',
      'observedGeneration', 'updatedNumberScheduled', 'numberAvailable', 'numberUnavailable'] as const;
    if (fields.some((f) => (cur[f] ?? 0) !== (status[f] ?? 0))) {
      const clean = Object.fromEntries(Object.entries(status).filter(([, v]) => v !== undefined));
      await client.patch(inNs(DAEMONSETS, ds.metadata.namespace), ds.metadata.name!, 'merge',
        { status: clean }, { subresource: 'status' }).catch((e) => { if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e; });
    }
  }

  return c;
}

function withKind(ds: DaemonSet) {
  return { ...ds, apiVersion: 'apps/v1', kind: 'DaemonSet' };
}
