// The garbage collector (ownerReferences), over the resources kdp's controllers own things in.
// Background: a dependent whose owners are all gone (checked live by uid) is deleted; one with
// some live owners only loses the dangling references. Foreground: an owner carrying the
// `foregroundDeletion` finalizer has its dependents deleted (foreground too) and loses the
// finalizer once no dependent that blocks owner deletion remains. Orphan: an owner carrying
// `orphan` has itself removed from its dependents' ownerReferences, then loses the finalizer.

import { BUILTIN_RESOURCES, parseApiVersion } from '../../api/registry.js';
import { isKdpError } from '../../errors.js';
import { objectKey } from '../../client/cache.js';
import type { Informer } from '../../client/informer.js';
import type { KubeObject, ResourceRef } from '../../client/types.js';
import type { ControllerContext } from '../options.js';
import { buildQueueController } from '../runner.js';
import type { Controller } from '../util.js';

export const GC_RESOURCES: readonly ResourceRef[] = [
  { group: '', version: 'v1', resource: 'pods' },
  { group: '', version: 'v1', resource: 'services' },
  { group: '', version: 'v1', resource: 'configmaps' },
  { group: '', version: 'v1', resource: 'secrets' },
  { group: '', version: 'v1', resource: 'nodes' },
  { group: 'apps', version: 'v1', resource: 'deployments' },
  { group: 'apps', version: 'v1', resource: 'replicasets' },
  { group: 'apps', version: 'v1', resource: 'daemonsets' },
  { group: 'batch', version: 'v1', resource: 'jobs' },
  { group: 'apps', version: 'v1', resource: 'statefulsets' },
  { group: 'apps', version: 'v1', resource: 'controllerrevisions' },
  { group: 'batch', version: 'v1', resource: 'cronjobs' },
  { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' },
  { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' },
];

const OWNER_INDEX = 'gcOwnerUid';
type Ref = NonNullable<KubeObject['metadata']['ownerReferences']>[number];

export function buildGarbageCollector(ctx: ControllerContext): Controller {
  const { client } = ctx;
  const infs: Array<{ ref: ResourceRef; inf: Informer<KubeObject> }> = GC_RESOURCES
    .filter((r) => BUILTIN_RESOURCES.some((b) => b.group === r.group && b.resource === r.resource))
    .map((ref) => ({ ref, inf: ctx.informers.informerFor<KubeObject>(ref, {
      indexers: { [OWNER_INDEX]: (o) => (o.metadata.ownerReferences ?? []).map((r) => r.uid) },
    }) }));
  const c = buildQueueController('gc', 2, sync);
  const item = (i: number, o: KubeObject) => `${i}|${objectKey(o)}`;

  const byUid = new Map<string, KubeObject>(); // every object the watched caches hold
  infs.forEach(({ inf }, i) => {
    inf.addEventHandler({
      onAdd: (o) => {
        byUid.set(o.metadata.uid!, o);
        if (o.metadata.ownerReferences?.length || isFinalizing(o)) c.queue.add(item(i, o));
      },
      onUpdate: (a, o) => {
        byUid.set(o.metadata.uid!, o);
        const refsChanged = JSON.stringify(a.metadata.ownerReferences)
          !== JSON.stringify(o.metadata.ownerReferences);
        if ((refsChanged && o.metadata.ownerReferences?.length) || isFinalizing(o)) {
          c.queue.add(item(i, o));
        }
        if (isFinalizing(o) && !isFinalizing(a)) {
          for (const d of dependents(o.metadata.uid!)) c.queue.add(d);
        }
      },
      onDelete: (o) => {
        byUid.delete(o.metadata.uid!);
        for (const d of dependents(o.metadata.uid!)) c.queue.add(d);
      },
    });
  });

  const isFinalizing = (o: KubeObject) => !!o.metadata.deletionTimestamp
    && (o.metadata.finalizers ?? []).some((f) => f === 'orphan' || f === 'foregroundDeletion');

  function dependents(uid: string): string[] {
    const out: string[] = [];
    infs.forEach(({ inf }, i) => {
      for (const d of inf.cache.byIndex(OWNER_INDEX, uid)) out.push(item(i, d));
    });
    return out;
  }

  function resolve(key: string): { ref: ResourceRef; obj?: KubeObject } {
    const bar = key.indexOf('|');
    const { ref, inf } = infs[Number(key.slice(0, bar))]!;
    const k = key.slice(bar + 1);
    const obj = inf.cache.get(k);
    const ns = obj?.metadata.namespace;
    return { ref: { ...ref, ...(ns ? { namespace: ns } : {}) }, obj };
  }

  async function ownerAlive(o: KubeObject, r: Ref): Promise<KubeObject | undefined> {
    const cached = byUid.get(r.uid);
    if (cached) return cached;
    const gv = parseApiVersion(r.apiVersion);
    const info = BUILTIN_RESOURCES.find((b) => b.group === gv.group && b.kind === r.kind);
    if (!info) return { metadata: { uid: r.uid } }; // unknown kind: never collect
    const ref: ResourceRef = { group: info.group, version: info.version, resource: info.resource,
      ...(info.namespaced ? { namespace: o.metadata.namespace } : {}) };
    try {
      const owner = await client.get(ref, r.name);
      return owner.metadata.uid === r.uid ? owner : undefined;
    } catch (e) {
      if (isKdpError(e, 'KDP_NOT_FOUND')) return undefined;
      throw e;
    }
  }

  async function sync(key: string): Promise<void> {
    const { ref, obj } = resolve(key);
    if (!obj) return;
    if (isFinalizing(obj)) await finalize(ref, obj);
    const refs = obj.metadata.ownerReferences ?? [];
    if (!refs.length) return;
    const alive = await Promise.all(refs.map((r) => ownerAlive(obj, r)));
    const foreground = alive.some((a) => a?.metadata.deletionTimestamp
      && a.metadata.finalizers?.includes('foregroundDeletion'));
    if (alive.every((a) => !a)) {
      await ignoreGone(client.delete(ref, obj.metadata.name!, {
        preconditions: { uid: obj.metadata.uid },
        propagationPolicy: 'Background',
      }));
    } else if (foreground && !obj.metadata.deletionTimestamp) {
      await ignoreGone(client.delete(ref, obj.metadata.name!, {
        preconditions: { uid: obj.metadata.uid }, propagationPolicy: 'Foreground',
      }));
    } else if (alive.some((a) => !a)) {
      const keep = refs.filter((_, i) => alive[i]);
      await ignoreGone(client.patch(ref, obj.metadata.name!, 'merge',
        { metadata: { ownerReferences: keep, uid: obj.metadata.uid } }));
    }
  }

  async function finalize(ref: ResourceRef, owner: KubeObject): Promise<void> {
    const uid = owner.metadata.uid!;
    const fins = owner.metadata.finalizers ?? [];
    const deps = dependents(uid).map((k) => ({ k, ...resolve(k) })).filter((d) => d.obj);
    if (fins.includes('orphan')) {
      for (const d of deps) {
        const keep = (d.obj!.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
        await ignoreGone(client.patch(d.ref, d.obj!.metadata.name!, 'merge',
          { metadata: { ownerReferences: keep } }));
      }
      await removeFinalizer(ref, owner, 'orphan');
      return;
    }
    if (fins.includes('foregroundDeletion')) {
      const blocking = deps.filter((d) => (d.obj!.metadata.ownerReferences ?? [])
        .some((r) => r.uid === uid && r.blockOwnerDeletion));
      for (const d of deps) {
        if (d.obj!.metadata.deletionTimestamp) continue;
        await ignoreGone(client.delete(d.ref, d.obj!.metadata.name!, {
          preconditions: { uid: d.obj!.metadata.uid }, propagationPolicy: 'Foreground',
        }));
      }
      if (blocking.length === 0) await removeFinalizer(ref, owner, 'foregroundDeletion');
      else {
        const i = infs.findIndex((x) => x.ref.resource === ref.resource);
        c.queue.addAfter(`${i}|${objectKey(owner)}`, 50);
      }
    }
  }

  async function removeFinalizer(ref: ResourceRef, o: KubeObject, f: string): Promise<void> {
    const rest = (o.metadata.finalizers ?? []).filter((x) => x !== f);
    await ignoreGone(client.patch(ref, o.metadata.name!, 'merge',
      { metadata: { finalizers: rest.length ? rest : null,
        resourceVersion: o.metadata.resourceVersion } }));
  }

  return { name: 'gc', start: c.start, stop: c.stop };
}

async function ignoreGone<T>(p: Promise<T>): Promise<T | undefined> {
  try { return await p; } catch (e) {
    if (isKdpError(e, 'KDP_NOT_FOUND') || isKdpError(e, 'KDP_CONFLICT')) return undefined;
    throw e;
  }
}
