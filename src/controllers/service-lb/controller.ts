// The lab cloud's service controller (cloud-controller-manager's `service` controller with a
// MetalLB-style address pool as its "cloud"). Semantics as upstream's
// (k8s.io/cloud-provider/controllers/service):
// - A Service wants a load balancer iff `spec.type: LoadBalancer`, `spec.loadBalancerClass` is
//   unset (a class means another implementation owns it: left alone) and it is not being deleted.
// - Ensuring: event `EnsuringLoadBalancer`, finalizer `service.kubernetes.io/load-balancer-cleanup`
//   added, an address per IP family of the Service that the pool serves (the one it already
//   holds, else `spec.loadBalancerIP` when free and in the pool, else the lowest free one),
//   `status.loadBalancer.ingress[] = {ip, ipMode: VIP}` (kube-proxy then programs the address on
//   every node), event `EnsuredLoadBalancer`. A failure (pool exhausted, requested IP taken or
//   outside the pool) is a Warning `SyncLoadBalancerFailed` and the Service stays pending; it is
//   retried whenever an address is released.
// - Cleanup (deleted, type changed away, class set): `DeletingLoadBalancer`, addresses released,
//   status cleared, finalizer removed, `DeletedLoadBalancer`. Only Services carrying our finalizer
//   or holding our addresses are cleaned up.
// Reachability is not this controller's: kube-proxy programs the addresses on every node, and in
// netns mode src/cluster/lb-speaker.ts makes one node answer ARP for each (MetalLB layer 2).
// One worker: the pool is in-memory state shared by every sync.

import type { IPFamily, LoadBalancerIngress, Service } from '../../api/types/service.js';
import { canonicalIP, ipFamilyOf } from '../../api/net.js';
import { isKdpError } from '../../errors.js';
import type { ControllerContext } from '../options.js';
import { SERVICES, inNs } from '../refs.js';
import { buildQueueController } from '../runner.js';
import type { Controller } from '../util.js';
import { buildLbPool } from './pool.js';

export const LB_CLEANUP_FINALIZER = 'service.kubernetes.io/load-balancer-cleanup';
/** Events come from this component, as upstream's (`service-controller`). */
export const SERVICE_CONTROLLER_COMPONENT = 'service-controller';

const keyOf = (s: Service) => `${s.metadata.namespace}/${s.metadata.name}`;

export function wantsLoadBalancer(s: Service): boolean {
  return s.spec?.type === 'LoadBalancer' && s.spec.loadBalancerClass === undefined;
}

function familiesOf(s: Service): IPFamily[] {
  if (s.spec?.ipFamilies?.length) return [...s.spec.ipFamilies];
  const f = ipFamilyOf(s.spec?.clusterIP ?? '');
  return [f ?? 'IPv4'];
}

function statusIPs(s: Service): string[] {
  return (s.status?.loadBalancer?.ingress ?? [])
    .map((i) => (i.ip ? canonicalIP(i.ip) : undefined)).filter((x): x is string => !!x);
}

export function buildServiceLbController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  if (options.cloudProvider === 'none') return { name: 'service-lb', start() {}, stop() {} };
  const pool = buildLbPool(options.lbCIDRs);
  const svcInf = ctx.informers.informerFor<Service>(SERVICES);
  const recorder = ctx.recorder(SERVICE_CONTROLLER_COMPONENT);
  const held = new Map<string, string[]>(); // service key → addresses it holds
  // resourceVersion of our last write per Service: an older cached copy is skipped (its update
  // event is still coming), so one change gives one Ensuring/Ensured pair.
  const written = new Map<string, string>();
  const older = (rv: string | undefined, than: string | undefined) =>
    !!rv && !!than && /^\d+$/.test(rv) && /^\d+$/.test(than) && BigInt(rv) < BigInt(than);
  let primed = false;
  const c = buildQueueController('service-lb', 1, sync);

  svcInf.addEventHandler({
    onAdd: (s) => c.queue.add(keyOf(s)),
    onUpdate: (_, s) => c.queue.add(keyOf(s)),
    onDelete: (s) => c.queue.add(keyOf(s)),
  });

  /** Before the first allocation: what existing Services already hold stays theirs. */
  function prime(): void {
    if (primed) return;
    primed = true;
    for (const s of svcInf.cache.list()) {
      if (!s.metadata.finalizers?.includes(LB_CLEANUP_FINALIZER)) continue;
      const ips = statusIPs(s).filter((ip) => pool.occupy(ip));
      if (ips.length) held.set(keyOf(s), ips);
    }
  }

  const event = (s: Service, type: 'Normal' | 'Warning', reason: string, msg: string) =>
    recorder.event({ ...s, apiVersion: 'v1', kind: 'Service' }, type, reason, msg);

  async function release(key: string): Promise<void> {
    const ips = held.get(key) ?? [];
    held.delete(key);
    for (const ip of ips) pool.release(ip);
    if (!ips.length) return;
    // Freed addresses: Services still pending may now get one.
    for (const s of svcInf.cache.list()) {
      if (wantsLoadBalancer(s) && !s.metadata.deletionTimestamp && !statusIPs(s).length) c.queue.add(keyOf(s));
    }
  }

  async function sync(key: string): Promise<void> {
    if (!svcInf.hasSynced()) { c.queue.addAfter(key, 20); return; }
    prime();
    const [ns, name] = key.split('/') as [string, string];
    const svc = svcInf.cache.getByName(ns, name);
    if (!svc) { written.delete(key); await release(key); return; }
    if (older(svc.metadata.resourceVersion, written.get(key))) return;
    const hasFinalizer = svc.metadata.finalizers?.includes(LB_CLEANUP_FINALIZER) ?? false;
    if (!wantsLoadBalancer(svc) || svc.metadata.deletionTimestamp) {
      if (hasFinalizer || held.has(key)) await cleanup(key, svc, hasFinalizer);
      return;
    }
    await ensure(key, svc, hasFinalizer);
  }

  async function cleanup(key: string, svc: Service, hasFinalizer: boolean): Promise<void> {
    event(svc, 'Normal', 'DeletingLoadBalancer', 'Deleting load balancer');
    await release(key);
    const ref = inNs(SERVICES, svc.metadata.namespace);
    try {
      if (!svc.metadata.deletionTimestamp && svc.status?.loadBalancer?.ingress?.length) {
        await client.patch(ref, svc.metadata.name!, 'merge',
          { status: { loadBalancer: { ingress: null } } }, { subresource: 'status' });
      }
      if (hasFinalizer) await removeFinalizer(svc);
    } catch (e) {
      if (isKdpError(e, 'KDP_NOT_FOUND')) return;
      throw e;
    }
    event(svc, 'Normal', 'DeletedLoadBalancer', 'Deleted load balancer');
  }

  async function removeFinalizer(svc: Service): Promise<void> {
    const finalizers = (svc.metadata.finalizers ?? []).filter((f) => f !== LB_CLEANUP_FINALIZER);
    await client.patch(inNs(SERVICES, svc.metadata.namespace), svc.metadata.name!, 'merge',
      { metadata: { finalizers, resourceVersion: svc.metadata.resourceVersion } });
  }

  /** The addresses for the Service, or an error message (nothing is held then). */
  function pick(key: string, svc: Service): string[] | string {
    const have = held.get(key);
    if (have?.length) return have;
    const families = familiesOf(svc).filter((f) => pool.hasFamily(f));
    if (!families.length) {
      return `no address pool for IP family ${familiesOf(svc).join(', ')} (--lb-cidr ${pool.cidrs.join(',')})`;
    }
    const requested = svc.spec?.loadBalancerIP ? canonicalIP(svc.spec.loadBalancerIP) : undefined;
    if (svc.spec?.loadBalancerIP && !requested) {
      return `spec.loadBalancerIP: ${JSON.stringify(svc.spec.loadBalancerIP)} is not an IP address`;
    }
    // After a restart the status names what the Service had; keep it when still free.
    const previous = statusIPs(svc);
    const got: string[] = [];
    const undo = () => { for (const ip of got) pool.release(ip); };
    for (const f of families) {
      let ip: string | undefined;
      if (requested && ipFamilyOf(requested) === f) {
        if (!pool.contains(requested)) {
          undo();
          return `spec.loadBalancerIP: ${requested} is not in the pool ${pool.cidrs.join(',')}`;
        }
        if (!pool.occupy(requested)) {
          undo();
          return `spec.loadBalancerIP: ${requested} is already allocated to another Service`;
        }
        ip = requested;
      } else {
        const prev = previous.find((p) => ipFamilyOf(p) === f);
        ip = prev && pool.occupy(prev) ? prev : pool.allocate(f);
      }
      if (!ip) {
        undo();
        return `no available IP address in the pool ${pool.cidrs.join(',')} (${f})`;
      }
      got.push(ip);
    }
    held.set(key, got);
    return got;
  }

  async function ensure(key: string, svc: Service, hasFinalizer: boolean): Promise<void> {
    const want = held.get(key);
    const current = statusIPs(svc);
    const upToDate = hasFinalizer && want !== undefined && sameList(want, current) &&
      (svc.status?.loadBalancer?.ingress ?? []).every((i) => i.ipMode === 'VIP');
    if (upToDate) return;
    event(svc, 'Normal', 'EnsuringLoadBalancer', 'Ensuring load balancer');
    const ref = inNs(SERVICES, svc.metadata.namespace);
    try {
      if (!hasFinalizer) {
        const out = await client.patch(ref, svc.metadata.name!, 'merge', { metadata: {
          finalizers: [...(svc.metadata.finalizers ?? []), LB_CLEANUP_FINALIZER],
          resourceVersion: svc.metadata.resourceVersion } });
        written.set(key, out.metadata.resourceVersion ?? '');
      }
    } catch (e) {
      if (isKdpError(e, 'KDP_NOT_FOUND')) return;
      throw e; // a conflict: retried with the newer object
    }
    const ips = pick(key, svc);
    if (typeof ips === 'string') {
      event(svc, 'Warning', 'SyncLoadBalancerFailed',
        `Error syncing load balancer: failed to ensure load balancer: ${ips}`);
      return; // stays pending; retried when an address is released or the Service changes
    }
    const ingress: LoadBalancerIngress[] = ips.map((ip) => ({ ip, ipMode: 'VIP' }));
    try {
      const out = await client.patch(ref, svc.metadata.name!, 'merge',
        { status: { loadBalancer: { ingress } } }, { subresource: 'status' });
      written.set(key, out.metadata.resourceVersion ?? '');
    } catch (e) {
      if (isKdpError(e, 'KDP_NOT_FOUND')) { await release(key); return; }
      throw e;
    }
    event(svc, 'Normal', 'EnsuredLoadBalancer', 'Ensured load balancer');
  }

  return { name: 'service-lb', start: c.start, stop: c.stop };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
