// Services → service ports, as upstream's ServiceChangeTracker / newBaseServiceInfo, for one IP
// family. Objects are read the way kube-proxy reads what the API server stored: addresses are
// parsed sloppily (leading zeros in IPv4 octets), source ranges are trimmed, and anything of the
// other family is dropped silently. Missing defaults (type, protocol, affinity timeout) are
// filled in as the API server would, so raw YAML compiles the same as stored objects.

import { formatCIDR, parseCIDR } from '../api/net.js';
import { canonicalIPFast, familyOfIP } from './ip-fast.js';
import type { Service, ServicePort } from '../api/types.js';
import { servicePortKey } from './types.js';
import type { IPFamily, Protocol, ServicePortInfo, ServicePortMap } from './types.js';

const HINTS_ANNOTATION = 'service.kubernetes.io/topology-aware-hints';
const TOPOLOGY_MODE_ANNOTATION = 'service.kubernetes.io/topology-mode';
/** API default of sessionAffinityConfig.clientIP.timeoutSeconds. */
export const DEFAULT_STICKY_SECONDS = 10800;

export interface ServiceTrackerOptions {
  readonly family: IPFamily;
  /** LoadBalancerIPMode feature (GA): skip ingress entries with `ipMode: Proxy`. Default true. */
  readonly loadBalancerIPMode?: boolean;
}

/** `ns/name` of an object. */
export function namespacedName(o: { metadata?: { namespace?: string; name?: string } }): string {
  return `${o.metadata?.namespace ?? 'default'}/${o.metadata?.name ?? ''}`;
}

/** Upstream GetClusterIPByFamily: the ClusterIP of `family`, or '' when there is none. */
export function clusterIPOfFamily(svc: Service, family: IPFamily): string {
  const spec = svc.spec ?? {};
  const families = spec.ipFamilies ?? [];
  if (families.length === 0) {
    const ip = spec.clusterIP ?? '';
    if (ip === '' || ip === 'None') return '';
    return familyOfIP(ip) === family ? ip : '';
  }
  const idx = families.indexOf(family);
  return idx >= 0 ? (spec.clusterIPs?.[idx] ?? '') : '';
}

function ipsOfFamily(ips: readonly string[] | undefined, family: IPFamily): string[] {
  const out: string[] = [];
  for (const s of ips ?? []) {
    if (familyOfIP(s) === family) out.push(canonicalIPFast(s)!);
  }
  return out;
}

/** MapCIDRsByIPFamily: trimmed, parsed sloppily, network form; invalid or other family dropped. */
function cidrsOfFamily(cidrs: readonly string[] | undefined, family: IPFamily): string[] {
  const out: string[] = [];
  for (const raw of cidrs ?? []) {
    const c = parseCIDR(String(raw).trim());
    if (c?.family === family) out.push(formatCIDR(c));
  }
  return out;
}

function lbVIPs(svc: Service, family: IPFamily, ipMode: boolean): string[] {
  const out: string[] = [];
  for (const ing of svc.status?.loadBalancer?.ingress ?? []) {
    if (!ing.ip) continue;
    if (ipMode && ing.ipMode === 'Proxy') continue;
    if (familyOfIP(ing.ip) === family) out.push(canonicalIPFast(ing.ip)!);
  }
  return out;
}

function externallyAccessibleByType(svc: Service): boolean {
  const type = svc.spec?.type ?? 'ClusterIP';
  return type === 'LoadBalancer' || type === 'NodePort' ||
    (type === 'ClusterIP' && (svc.spec?.externalIPs?.length ?? 0) > 0);
}

/** Upstream ShouldSkipService: headless and ExternalName services have no rules. */
export function shouldSkipService(svc: Service): boolean {
  const ip = svc.spec?.clusterIP ?? '';
  return ip === '' || ip === 'None' || svc.spec?.type === 'ExternalName';
}

function portInfo(svc: Service, port: ServicePort, family: IPFamily, clusterIP: string,
  opts: ServiceTrackerOptions): ServicePortInfo {
  const spec = svc.spec ?? {};
  const ns = svc.metadata?.namespace ?? 'default';
  const name = svc.metadata?.name ?? '';
  const protocol = (port.protocol ?? 'TCP') as Protocol;
  const extLocal = externallyAccessibleByType(svc) && spec.externalTrafficPolicy === 'Local';
  const affinity = spec.sessionAffinity === 'ClientIP';
  const needsHC = spec.type === 'LoadBalancer' && extLocal;
  const ann = svc.metadata?.annotations ?? {};
  const info: ServicePortInfo = {
    name: { namespace: ns, name, port: port.name ?? '', protocol },
    clusterIP: canonicalIPFast(clusterIP)!,
    port: port.port,
    protocol,
    nodePort: port.nodePort ?? 0,
    loadBalancerVIPs: lbVIPs(svc, family, opts.loadBalancerIPMode ?? true),
    sessionAffinityClientIP: affinity,
    stickyMaxAgeSeconds: affinity
      ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_STICKY_SECONDS) : 0,
    externalIPs: ipsOfFamily(spec.externalIPs, family),
    loadBalancerSourceRanges: cidrsOfFamily(spec.loadBalancerSourceRanges, family),
    healthCheckNodePort: needsHC ? (spec.healthCheckNodePort ?? 0) : 0,
    externalPolicyLocal: extLocal,
    internalPolicyLocal: spec.internalTrafficPolicy === 'Local',
    hintsAnnotation: ann[HINTS_ANNOTATION] ?? ann[TOPOLOGY_MODE_ANNOTATION] ?? '',
    ...(spec.trafficDistribution ? { trafficDistribution: spec.trafficDistribution } : {}),
  };
  return info;
}

/** The service ports of one Service for one family (upstream serviceToServiceMap). */
export function serviceToServicePorts(svc: Service | undefined,
  opts: ServiceTrackerOptions): Map<string, ServicePortInfo> {
  const out = new Map<string, ServicePortInfo>();
  if (!svc || shouldSkipService(svc)) return out;
  const cip = clusterIPOfFamily(svc, opts.family);
  if (cip === '' || canonicalIPFast(cip) === undefined) return out;
  for (const p of svc.spec?.ports ?? []) {
    const info = portInfo(svc, p, opts.family, cip, opts);
    out.set(servicePortKey(info.name), info);
  }
  return out;
}

/** Structural equality of two derived port maps (upstream compares with reflect.DeepEqual). */
export function samePortMaps(a: ReadonlyMap<string, ServicePortInfo>,
  b: ReadonlyMap<string, ServicePortInfo>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (!w || JSON.stringify(v) !== JSON.stringify(w)) return false;
  }
  return true;
}

/** What `checkout` reports: the whole map plus what changed since the previous checkout. */
export interface ServiceCheckout {
  readonly services: ServicePortMap;
  /** `ns/name` of every Service whose derived ports changed. */
  readonly changedServices: ReadonlySet<string>;
  /** Service-port keys (old and new) of those Services. */
  readonly changedKeys: ReadonlySet<string>;
}

/**
 * Accumulates Service events between syncs. `update(prev, cur)` with `cur` undefined deletes.
 * As upstream, an update that leaves the derived ports unchanged is not a change.
 */
export class ServiceChangeTracker {
  private readonly applied = new Map<string, Map<string, ServicePortInfo>>();
  private readonly pending = new Map<string, Map<string, ServicePortInfo>>();
  private readonly ports = new Map<string, ServicePortInfo>();

  constructor(private readonly opts: ServiceTrackerOptions) {}

  /** Records one event; true when it leaves a pending change for the next checkout. */
  update(previous: Service | undefined, current: Service | undefined): boolean {
    const obj = current ?? previous;
    if (!obj) return false;
    const nn = namespacedName(obj);
    const derived = serviceToServicePorts(current, this.opts);
    if (samePortMaps(derived, this.applied.get(nn) ?? new Map())) this.pending.delete(nn);
    else this.pending.set(nn, derived);
    return this.pending.size > 0;
  }

  /** Applies pending changes (upstream ServicePortMap.Update) and reports them. */
  checkout(): ServiceCheckout {
    const changedServices = new Set<string>();
    const changedKeys = new Set<string>();
    for (const [nn, next] of this.pending) {
      const prev = this.applied.get(nn);
      for (const k of prev?.keys() ?? []) { this.ports.delete(k); changedKeys.add(k); }
      for (const [k, v] of next) { this.ports.set(k, v); changedKeys.add(k); }
      if (next.size === 0) this.applied.delete(nn);
      else this.applied.set(nn, next);
      changedServices.add(nn);
    }
    this.pending.clear();
    return { services: this.ports, changedServices, changedKeys };
  }
}
