// Allocation of a Service's clusterIPs, nodePorts and healthCheckNodePort on create and update,
// after upstream's service REST (pkg/registry/core/service/storage/alloc.go): requested values
// are honoured (422 Invalid when out of range or taken), missing ones are picked at random,
// ports with the same port number share one nodePort, and an update keeps what the old object
// held. Everything taken is recorded in `Taken` so the caller can undo it.

import { parseIP, type IPFamily } from '../../api/net.js';
import type { Service, ServicePort } from '../../api/types.js';
import { invalid, invalidMessage, type Cause } from '../../api/validation/field-errors.js';
import { kdpError } from '../../errors.js';
import { initIPFamilies } from './ip-families.js';
import type { IPRange } from './ip-range.js';
import type { PortRange } from './port-range.js';

/** Addresses and ports one Service object holds (or one request took). */
export interface Held {
  ips: string[];
  ports: number[];
  /** Set when allocation failed because a value was taken or a range was full: the bitmap
   *  may be stale (a Service removed around admission), so a repair and retry may succeed. */
  conflicted?: boolean;
}

export interface Allocators {
  readonly ranges: ReadonlyMap<IPFamily, IPRange>;
  readonly families: readonly IPFamily[];
  readonly ports: PortRange;
}

export const needsClusterIP = (s: Service): boolean => s.spec?.type !== 'ExternalName';
export const needsNodePort = (s: Service): boolean =>
  s.spec?.type === 'NodePort' || s.spec?.type === 'LoadBalancer';
export const needsHCNP = (s: Service): boolean =>
  s.spec?.type === 'LoadBalancer' && s.spec.externalTrafficPolicy === 'Local';

/** What a stored Service holds: every clusterIP but `None`, every nodePort, the HCNP. */
export function heldBy(svc: Service): Held {
  const s = svc.spec ?? {};
  const ips = (s.clusterIPs?.length ? s.clusterIPs : s.clusterIP ? [s.clusterIP] : [])
    .filter((ip) => ip !== 'None' && ip !== '');
  const ports = (s.ports ?? []).map((p) => p.nodePort ?? 0).filter((p) => p > 0);
  if (s.healthCheckNodePort) ports.push(s.healthCheckNodePort);
  return { ips, ports: [...new Set(ports)] };
}

function rejectInvalid(svc: Service, causes: Cause[]): never {
  const name = svc.metadata?.name ?? '';
  throw kdpError('KDP_INVALID', invalidMessage('Service', name, causes),
    { name, kind: 'Service', causes });
}

function allocateClusterIPs(svc: Service, a: Allocators, old: Held, taken: Held): void {
  const causes = initIPFamilies(svc, a.families);
  if (causes.length > 0) rejectInvalid(svc, causes);
  const s = svc.spec!;
  if (s.clusterIP === 'None' || s.clusterIPs?.[0] === 'None') {
    s.clusterIP = 'None';
    s.clusterIPs = ['None'];
    return;
  }
  const ips: string[] = [];
  for (const [i, fam] of (s.ipFamilies ?? []).entries()) {
    const want = s.clusterIPs?.[i] ?? (i === 0 ? s.clusterIP ?? '' : '');
    const range = a.ranges.get(fam)!;
    if (want === '') {
      const ip = range.allocateNext();
      if (ip === undefined) {
        taken.conflicted = true;
        throw kdpError('KDP_INTERNAL', 'failed to allocate a serviceIP: range is full');
      }
      taken.ips.push(ip);
      ips.push(ip);
      continue;
    }
    ips.push(want);
    if (!parseIP(want) || old.ips.includes(want)) continue; // validation reports bad IPs
    const r = range.allocate(want);
    if (!r.ok) {
      taken.conflicted = range.offsetOf(want) !== undefined;
      rejectInvalid(svc, [invalid('spec.clusterIPs', s.clusterIPs ?? [want],
        `failed to allocate IP ${want}: ${r.error}`)]);
    }
    taken.ips.push(want);
  }
  s.clusterIPs = ips;
  s.clusterIP = ips[0] ?? '';
}

function reservePort(svc: Service, a: Allocators, port: number, field: string, old: Held,
  taken: Held, prefix = ''): void {
  if (old.ports.includes(port) || taken.ports.includes(port)) return;
  const r = a.ports.allocate(port);
  if (!r.ok) {
    taken.conflicted = a.ports.contains(port);
    rejectInvalid(svc, [invalid(field, port, `${prefix}${r.error}`)]);
  }
  taken.ports.push(port);
}

function nextPort(a: Allocators, taken: Held, what: string): number {
  const p = a.ports.allocateNext();
  if (p === undefined) {
    taken.conflicted = true;
    throw kdpError('KDP_INTERNAL', `failed to allocate a ${what}: range is full`);
  }
  taken.ports.push(p);
  return p;
}

/** Upstream initNodePorts / updateNodePorts. */
function allocateNodePorts(svc: Service, a: Allocators, old: Held, taken: Held): void {
  const s = svc.spec!;
  const ports: ServicePort[] = s.ports ?? [];
  const allocateAll = s.type === 'NodePort' || s.allocateLoadBalancerNodePorts !== false;
  const byPort = new Map<number, number>();
  ports.forEach((p, i) => {
    const field = `spec.ports[${i}].nodePort`;
    if (!p.nodePort && !allocateAll) return;
    const shared = byPort.get(p.port);
    if (shared === undefined) {
      const requested = ports.slice(i).find((q) => q.port === p.port && q.nodePort)?.nodePort;
      const np = requested ?? nextPort(a, taken, 'nodePort');
      if (requested !== undefined) reservePort(svc, a, requested, field, old, taken);
      p.nodePort = np;
      byPort.set(p.port, np);
    } else if (p.nodePort !== shared) {
      if (!p.nodePort) p.nodePort = shared;
      else reservePort(svc, a, p.nodePort, field, old, taken);
    }
  });
}

function allocateHealthCheckNodePort(svc: Service, a: Allocators, old: Held, taken: Held): void {
  const s = svc.spec!;
  if (!s.healthCheckNodePort) {
    s.healthCheckNodePort = nextPort(a, taken, 'HealthCheck NodePort');
    return;
  }
  reservePort(svc, a, s.healthCheckNodePort, 'spec.healthCheckNodePort', old, taken,
    `failed to allocate requested HealthCheck NodePort ${s.healthCheckNodePort}: `);
}

/** Upstream dropTypeDependentFields: values of the old type the client left as they were. */
export function dropTypeDependentFields(svc: Service, old: Service): void {
  const s = svc.spec;
  const o = old.spec;
  if (!s || !o) return;
  const same = (x: unknown, y: unknown) => JSON.stringify(x ?? null) === JSON.stringify(y ?? null);
  if (needsClusterIP(old) && !needsClusterIP(svc)) {
    if (same(s.clusterIP, o.clusterIP) && same(s.clusterIPs, o.clusterIPs)) {
      s.clusterIP = '';
      delete s.clusterIPs;
    }
    if (same(s.ipFamilies, o.ipFamilies)) delete s.ipFamilies;
    if (same(s.ipFamilyPolicy, o.ipFamilyPolicy)) delete s.ipFamilyPolicy;
  }
  const nodePorts = (x: Service) => (x.spec?.ports ?? []).map((p) => p.nodePort ?? 0);
  if (needsNodePort(old) && !needsNodePort(svc) && same(nodePorts(svc), nodePorts(old))) {
    for (const p of s.ports ?? []) delete p.nodePort;
  }
  if (needsHCNP(old) && !needsHCNP(svc) && s.healthCheckNodePort === o.healthCheckNodePort) {
    delete s.healthCheckNodePort;
  }
  // Leaving LoadBalancer: allocateLoadBalancerNodePorts and loadBalancerClass go unless changed.
  if (o.type === 'LoadBalancer' && s.type !== 'LoadBalancer') {
    if (s.allocateLoadBalancerNodePorts !== undefined && o.allocateLoadBalancerNodePorts !== undefined &&
      s.allocateLoadBalancerNodePorts === o.allocateLoadBalancerNodePorts) delete s.allocateLoadBalancerNodePorts;
    if (same(s.loadBalancerClass, o.loadBalancerClass)) delete s.loadBalancerClass;
  }
  // No longer reachable from outside: externalTrafficPolicy goes unless changed.
  if (externallyAccessible(old) && !externallyAccessible(svc) && same(s.externalTrafficPolicy, o.externalTrafficPolicy)) {
    delete s.externalTrafficPolicy;
  }
  // The load balancer's status goes with the type (its teardown is the cloud's business).
  if (s.type !== 'LoadBalancer' && svc.status?.loadBalancer) svc.status = { ...svc.status, loadBalancer: {} };
}

/** Upstream serviceapi.ExternallyAccessible: NodePort, LoadBalancer, or ClusterIP with externalIPs. */
function externallyAccessible(svc: Service): boolean {
  const t = svc.spec?.type ?? 'ClusterIP';
  return t === 'LoadBalancer' || t === 'NodePort' || (t === 'ClusterIP' && (svc.spec?.externalIPs?.length ?? 0) > 0);
}

/**
 * Allocates for `svc` (create when `old` is undefined), recording what it took in `taken`.
 * Throws KDP_INVALID / KDP_INTERNAL; `taken` then holds what must be released.
 */
export function allocateService(svc: Service, old: Service | undefined, a: Allocators,
  taken: Held): void {
  const held = old ? heldBy(old) : { ips: [], ports: [] };
  if (needsClusterIP(svc)) allocateClusterIPs(svc, a, held, taken);
  if (needsNodePort(svc)) allocateNodePorts(svc, a, held, taken);
  if (needsHCNP(svc)) allocateHealthCheckNodePort(svc, a, held, taken);
}

/** What `before` held that `after` no longer holds. */
export function heldDifference(before: Held, after: Held): Held {
  return {
    ips: before.ips.filter((ip) => !after.ips.includes(ip)),
    ports: before.ports.filter((p) => !after.ports.includes(p)),
  };
}
