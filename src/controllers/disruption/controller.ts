// The disruption controller, as upstream's pkg/controller/disruption: for every
// PodDisruptionBudget it counts the pods its selector picks (an empty selector: every pod of the
// namespace), the healthy ones (Ready, not being deleted, not already evicted: disruptedPods),
// the expected number (minAvailable as a number: the pods found; a percentage or maxUnavailable:
// the scale of the pods' controllers — Deployment via its ReplicaSet, ReplicaSet, StatefulSet),
// and writes status: currentHealthy, desiredHealthy, expectedPods, disruptionsAllowed and the
// DisruptionAllowed condition (SufficientPods / InsufficientPods; SyncFailed when the scale
// cannot be known). Entries of disruptedPods older than 2 minutes, or whose pod is gone, expire.

import type { Pod } from '../../api/types.js';
import type { IntOrString } from '../../api/types.js';
import type { KubeObject } from '../../client/types.js';
import { isKdpError } from '../../errors.js';
import { matchesPod, type PodDisruptionBudget } from '../../api/pdb.js';
import type { ControllerContext } from '../options.js';
import { DEPLOYMENTS, PODS, REPLICASETS, inNs } from '../refs.js';
import { buildQueueController } from '../runner.js';
import { controllerRef, isPodReady, type Controller } from '../util.js';

export const PDBS = { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets' } as const;
const STATEFULSETS = { group: 'apps', version: 'v1', resource: 'statefulsets' } as const;
/** upstream DeletionTimeout: an eviction not followed by the pod's deletion expires. */
const DELETION_TIMEOUT_MS = 2 * 60_000;

/** `GetScaledValueFromIntOrPercent`: a percentage of `total`, rounded up or down. */
export function scaledValue(v: IntOrString, total: number, roundUp: boolean): number {
  if (typeof v === 'number') return v;
  const pct = Number(v.replace(/%$/, ''));
  const x = (pct * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

export interface BudgetCounts {
  readonly expectedPods: number;
  readonly desiredHealthy: number;
  readonly currentHealthy: number;
  readonly disruptionsAllowed: number;
}

/** The status numbers of a budget, as upstream's getExpectedPodCount + updatePdbStatus. */
export function budgetCounts(spec: PodDisruptionBudget['spec'], pods: readonly Pod[], healthy: number,
  controllerScale: () => number): BudgetCounts {
  let expectedPods: number;
  let desiredHealthy: number;
  if (spec?.maxUnavailable !== undefined) {
    expectedPods = controllerScale();
    desiredHealthy = Math.max(0, expectedPods - scaledValue(spec.maxUnavailable, expectedPods, true));
  } else if (spec?.minAvailable !== undefined && typeof spec.minAvailable === 'number') {
    expectedPods = pods.length;
    desiredHealthy = spec.minAvailable;
  } else if (spec?.minAvailable !== undefined) {
    expectedPods = controllerScale();
    desiredHealthy = scaledValue(spec.minAvailable, expectedPods, true);
  } else {
    expectedPods = pods.length;
    desiredHealthy = 0;
  }
  const disruptionsAllowed = expectedPods > 0 ? Math.max(0, healthy - desiredHealthy) : 0;
  return { expectedPods, desiredHealthy, currentHealthy: healthy, disruptionsAllowed };
}

export function buildDisruptionController(ctx: ControllerContext): Controller {
  const { client } = ctx;
  const pdbInf = ctx.informers.informerFor<PodDisruptionBudget>(PDBS);
  const podInf = ctx.informers.informerFor<Pod>(PODS);
  const c = buildQueueController('disruption', 2, sync);
  const key = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;
  pdbInf.addEventHandler({ onAdd: (p) => c.queue.add(key(p)), onUpdate: (_, p) => c.queue.add(key(p)) });
  const forPod = (pod: Pod) => {
    for (const p of pdbInf.cache.list()) if (matchesPod(p, pod)) c.queue.add(key(p));
  };
  podInf.addEventHandler({ onAdd: forPod, onUpdate: (old, pod) => { forPod(old); forPod(pod); }, onDelete: forPod });

  async function scaleOf(pods: readonly Pod[]): Promise<number> {
    const seen = new Map<string, number>();
    for (const pod of pods) {
      const ref = controllerRef(pod);
      if (!ref) throw new Error(`found no controller ref for pod "${pod.metadata.name}"`);
      if (seen.has(ref.uid)) continue;
      const ns = pod.metadata.namespace!;
      let replicas: number | undefined;
      if (ref.kind === 'ReplicaSet') {
        const rs = await client.get<KubeObject & { spec?: { replicas?: number } }>(inNs(REPLICASETS, ns), ref.name);
        const dref = controllerRef(rs);
        if (dref?.kind === 'Deployment') {
          if (seen.has(dref.uid)) { seen.set(ref.uid, 0); continue; }
          const d = await client.get<KubeObject & { spec?: { replicas?: number } }>(inNs(DEPLOYMENTS, ns), dref.name);
          seen.set(dref.uid, d.spec?.replicas ?? 1);
          seen.set(ref.uid, 0);
          continue;
        }
        replicas = rs.spec?.replicas ?? 1;
      } else if (ref.kind === 'StatefulSet') {
        replicas = (await client.get<KubeObject & { spec?: { replicas?: number } }>(inNs(STATEFULSETS, ns), ref.name))
          .spec?.replicas ?? 1;
      } else {
        throw new Error(`found no controllers for pod "${pod.metadata.name}"`);
      }
      seen.set(ref.uid, replicas);
    }
    return [...seen.values()].reduce((a, b) => a + b, 0);
  }

  async function sync(k: string): Promise<void> {
    const [ns, name] = k.split('/') as [string, string];
    const pdb = pdbInf.cache.getByName(ns, name);
    if (!pdb) return;
    const pods = podInf.cache.list().filter((p) => matchesPod(pdb, p));
    const now = ctx.options.now();
    const disrupted: Record<string, string> = {};
    for (const [pod, at] of Object.entries(pdb.status?.disruptedPods ?? {})) {
      const p = pods.find((x) => x.metadata.name === pod);
      if (p && !p.metadata.deletionTimestamp && Date.parse(at) + DELETION_TIMEOUT_MS > now) disrupted[pod] = at;
    }
    const healthy = pods.filter((p) => !p.metadata.deletionTimestamp && !disrupted[p.metadata.name!] &&
      isPodReady(p)).length;
    let counts: BudgetCounts;
    let condition: { status: string; reason: string; message: string };
    let scaleError: string | undefined;
    let scale = 0;
    const needsScale = pdb.spec?.maxUnavailable !== undefined || typeof pdb.spec?.minAvailable === 'string';
    if (needsScale) {
      try { scale = await scaleOf(pods); } catch (e) { scaleError = (e as Error).message; }
    }
    if (scaleError) {
      counts = { expectedPods: 0, desiredHealthy: 0, currentHealthy: healthy, disruptionsAllowed: 0 };
      condition = { status: 'False', reason: 'SyncFailed', message: scaleError };
    } else {
      counts = budgetCounts(pdb.spec, pods, healthy, () => scale);
      condition = counts.disruptionsAllowed > 0 ? { status: 'True', reason: 'SufficientPods', message: '' }
        : { status: 'False', reason: 'InsufficientPods', message: '' };
    }
    const old = pdb.status ?? {};
    const oldCond = old.conditions?.find((x) => x.type === 'DisruptionAllowed');
    const sameCond = oldCond && oldCond.status === condition.status && oldCond.reason === condition.reason;
    const status = {
      observedGeneration: pdb.metadata.generation ?? 1,
      ...(Object.keys(disrupted).length ? { disruptedPods: disrupted } : {}),
      ...counts,
      conditions: [{ type: 'DisruptionAllowed', ...condition, observedGeneration: pdb.metadata.generation ?? 1,
        lastTransitionTime: sameCond ? oldCond.lastTransitionTime : new Date(now).toISOString().replace(/\.\d+Z$/, 'Z') }],
    };
    if (JSON.stringify(status) === JSON.stringify(old)) return;
    try {
      await client.update(inNs(PDBS, ns), { ...pdb, status } as KubeObject, { subresource: 'status' });
    } catch (e) {
      if (isKdpError(e, 'KDP_NOT_FOUND')) return;
      throw e;
    }
  }

  return { name: 'disruption', start: c.start, stop: c.stop };
}
