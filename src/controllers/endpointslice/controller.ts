// The EndpointSlice controller: for every Service with a selector, keeps EndpointSlices
// (≤ maxEndpointsPerSlice endpoints each, labelled `kubernetes.io/service-name` and managed-by
// `endpointslice-controller.k8s.io`, owned by the Service) listing the selected pods with
// ready/serving/terminating conditions, nodeName, zone and targetRef.

import type { EndpointSlice, Node, Pod, Service } from '../../api/types.js';
import { matchesSelectorMap } from '../../api/selectors.js';
import { isKdpError } from '../../errors.js';
import { objectKey } from '../../client/cache.js';
import type { InformerFactory } from '../../client/informer.js';
import type { ControllerContext } from '../options.js';
import { ENDPOINTSLICES, inNs, NODES, PODS, SERVICES } from '../refs.js';
import { buildQueueController } from '../runner.js';
import type { Controller } from '../util.js';
import { LABEL_PAIR_INDEX, labelPairIndex, objectsMatchingMap } from '../label-index.js';
import { desiredGroups } from './desired.js';
import { MANAGED_BY, MANAGED_BY_LABEL, planSlices, SERVICE_NAME_LABEL } from './reconcile.js';

export const SERVICE_NAME_INDEX = 'serviceName';

/** Enqueues the Services whose selector matches a pod's old or new labels. */
export function watchPodsForServices(
  informers: InformerFactory, enqueue: (serviceKey: string) => void,
): void {
  const svcInf = informers.informerFor<Service>(SERVICES);
  const podInf = informers.informerFor<Pod>(PODS);
  const forPod = (p: Pod) => {
    for (const s of svcInf.cache.byIndex('namespace', p.metadata.namespace ?? '')) {
      if (matchesSelectorMap(s.spec?.selector, p.metadata.labels)) enqueue(objectKey(s));
    }
  };
  podInf.addEventHandler({
    onAdd: forPod,
    onUpdate: (a, b) => {
      if (a.metadata.resourceVersion === b.metadata.resourceVersion) return; // resync
      forPod(b);
      if (JSON.stringify(a.metadata.labels) !== JSON.stringify(b.metadata.labels)) forPod(a);
    },
    onDelete: forPod,
  });
  svcInf.addEventHandler({
    onAdd: (s) => enqueue(objectKey(s)),
    onUpdate: (_, s) => enqueue(objectKey(s)),
    onDelete: (s) => enqueue(objectKey(s)),
  });
}

export function buildEndpointSliceController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const svcInf = ctx.informers.informerFor<Service>(SERVICES);
  const podInf = ctx.informers.informerFor<Pod>(PODS,
    { indexers: { [LABEL_PAIR_INDEX]: labelPairIndex } });
  const nodeInf = ctx.informers.informerFor<Node>(NODES);
  const sliceInf = ctx.informers.informerFor<EndpointSlice>(ENDPOINTSLICES, {
    indexers: {
      [SERVICE_NAME_INDEX]: (s) => {
        const n = s.metadata.labels?.[SERVICE_NAME_LABEL];
        return n && s.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY
          ? [`${s.metadata.namespace}/${n}`] : [];
      },
    },
  });
  const c = buildQueueController('endpointslice', options.workers, sync);
  watchPodsForServices(ctx.informers,
    (k) => c.queue.addAfter(k, options.endpointUpdatesBatchPeriodMs));
  sliceInf.addEventHandler({
    // Someone else changed or deleted one of our slices: reconcile the Service again.
    onUpdate: (_, s) => requeueFor(s),
    onDelete: (s) => requeueFor(s),
  });
  function requeueFor(s: EndpointSlice): void {
    const n = s.metadata.labels?.[SERVICE_NAME_LABEL];
    if (n && s.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY) {
      c.queue.add(`${s.metadata.namespace}/${n}`);
    }
  }

  // Our own writes not yet seen by the informer: acting on a stale cache would duplicate slices
  // (upstream's endpointSliceTracker).
  const pending = new Map<string, Array<{ name: string; rv?: string; gone?: boolean }>>();
  function cacheIsStale(key: string, ns: string): boolean {
    const p = pending.get(key);
    if (!p) return false;
    const stale = p.some((w) => {
      const cur = sliceInf.cache.getByName(ns, w.name);
      if (w.gone) return !!cur;
      return !cur || Number(cur.metadata.resourceVersion) < Number(w.rv);
    });
    if (!stale) pending.delete(key);
    return stale;
  }

  async function sync(key: string): Promise<void> {
    const ns = key.slice(0, key.indexOf('/'));
    if (cacheIsStale(key, ns)) { c.queue.addAfter(key, 5); return; }
    const existing = sliceInf.cache.byIndex(SERVICE_NAME_INDEX, key);
    const svc = svcInf.cache.get(key);
    if (!svc || !svc.spec?.selector || Object.keys(svc.spec.selector).length === 0
      || svc.metadata.deletionTimestamp) {
      // Slices of a gone Service are garbage-collected through their ownerReference; a Service
      // that lost its selector keeps none of ours.
      if (svc && !svc.metadata.deletionTimestamp) await removeAll(existing);
      return;
    }
    const pods = objectsMatchingMap(podInf.cache, svc.metadata.namespace ?? '', svc.spec.selector);
    const families = svc.spec.ipFamilies?.length ? svc.spec.ipFamilies : ['IPv4' as const];
    const stale = existing.filter((s) => !families.includes(s.addressType as 'IPv4'));
    await removeAll(stale);
    for (const fam of families) {
      const groups = desiredGroups(svc, pods, fam, (n) => nodeInf.cache.get(n));
      const plan = planSlices(svc, fam, groups, existing, options.maxEndpointsPerSlice);
      const trigger = triggerTime(svc, pods);
      for (const sl of [...plan.create, ...plan.update]) {
        if (trigger) sl.metadata.annotations = { ...(sl.metadata.annotations ?? {}), [TRIGGER_TIME]: trigger };
      }
      const ref = inNs(ENDPOINTSLICES, svc.metadata.namespace);
      const writes: Array<{ name: string; rv?: string; gone?: boolean }> = [];
      const note = (o: EndpointSlice | undefined) => {
        if (o) writes.push({ name: o.metadata.name!, rv: o.metadata.resourceVersion });
      };
      try {
        await Promise.all([
          ...plan.create.map(async (s) => note(await client.create<EndpointSlice>(ref, s))),
          ...plan.update.map(async (s) => note(await client.update<EndpointSlice>(ref, s))),
          ...plan.remove.map(async (s) => {
            await ignoreNotFound(client.delete(ref, s.metadata.name!));
            writes.push({ name: s.metadata.name!, gone: true });
          }),
        ]);
      } finally {
        if (writes.length) pending.set(key, [...(pending.get(key) ?? []), ...writes]);
      }
    }
  }

  async function removeAll(slices: EndpointSlice[]): Promise<void> {
    await Promise.all(slices.map((s) => ignoreNotFound(
      client.delete(inNs(ENDPOINTSLICES, s.metadata.namespace), s.metadata.name!))));
  }

  return { name: 'endpointslice', start: c.start, stop: c.stop };
}

/** Upstream's annotation: when the change that this slice write reflects happened (kube-proxy
 *  measures network programming latency from it). */
export const TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';

/** The latest change among the Service and its pods (upstream TriggerTimeTracker: a pod's last
 *  Ready transition, else its creation; the Service's creation), or undefined. */
function triggerTime(svc: Service, pods: readonly Pod[]): string | undefined {
  let best = '';
  const take = (t: string | null | undefined) => { if (t && t > best) best = t; };
  take(svc.metadata.creationTimestamp);
  for (const p of pods) {
    const ready = p.status?.conditions?.find((c) => c.type === 'Ready');
    take(ready?.lastTransitionTime ?? p.metadata.creationTimestamp);
  }
  return best || undefined;
}

export async function ignoreNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try { return await p; } catch (e) {
    if (isKdpError(e, 'KDP_NOT_FOUND')) return undefined;
    throw e;
  }
}
