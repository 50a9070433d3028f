// Service and Endpoints defaulting as upstream's SetDefaults_Service plus the ipFamilyPolicy
// default the registry applies on create. `ipFamilies` and `clusterIP(s)` are left to the API
// server's allocator, which knows the cluster's service CIDRs.

import type { Endpoints, Service, ServicePort } from '../types.js';

function targetPortUnset(p: ServicePort): boolean {
  return p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '';
}

export function defaultService(svc: Service): void {
  const s = (svc.spec ??= {});
  s.type ??= 'ClusterIP';
  s.sessionAffinity ??= 'None';
  if (s.sessionAffinity === 'None') delete s.sessionAffinityConfig;
  if (s.sessionAffinity === 'ClientIP') {
    const cfg = (s.sessionAffinityConfig ??= {});
    const c = (cfg.clientIP ??= {});
    c.timeoutSeconds ??= 10800;
  }
  for (const p of s.ports ?? []) {
    p.protocol ??= 'TCP';
    if (targetPortUnset(p)) p.targetPort = p.port;
  }
  if (isExternallyAccessible(svc)) s.externalTrafficPolicy ??= 'Cluster';
  if (s.type !== 'ExternalName') s.internalTrafficPolicy ??= 'Cluster';
  if (s.type === 'LoadBalancer') {
    s.allocateLoadBalancerNodePorts ??= true;
    for (const ing of svc.status?.loadBalancer?.ingress ?? []) if (ing.ip) ing.ipMode ??= 'VIP';
  }
  if (s.type !== 'ExternalName' && s.ipFamilyPolicy === undefined) {
    const headlessNoSelector = s.clusterIP === 'None'
      && Object.keys(s.selector ?? {}).length === 0;
    s.ipFamilyPolicy = headlessNoSelector ? 'RequireDualStack' : 'SingleStack';
  }
  normalizeClusterIPs(svc);
}

/** Upstream apiservice.ExternallyAccessible: NodePort, LoadBalancer, or ClusterIP + externalIPs. */
export function isExternallyAccessible(svc: Service): boolean {
  const s = svc.spec ?? {};
  return s.type === 'NodePort' || s.type === 'LoadBalancer'
    || ((s.type ?? 'ClusterIP') === 'ClusterIP' && (s.externalIPs?.length ?? 0) > 0);
}

/**
 * Upstream strategy normalizeClusterIPs: keeps `clusterIP` and `clusterIPs[0]` in step. On
 * create a lone `clusterIP` becomes `clusterIPs: [clusterIP]`; on update a changed `clusterIP`
 * with unchanged `clusterIPs` (or the reverse) is carried across, so validation sees one story.
 */
export function normalizeClusterIPs(svc: Service, old?: Service): void {
  const s = svc.spec;
  if (!s) return;
  const ip = s.clusterIP ?? '';
  const ips = s.clusterIPs ?? [];
  if (!old) {
    if (ip !== '' && ips.length === 0) s.clusterIPs = [ip];
    return;
  }
  const o = old.spec ?? {};
  const oldIPs = o.clusterIPs ?? [];
  const ipsSame = ips.length === oldIPs.length && ips.every((x, i) => x === oldIPs[i]);
  if (ip !== (o.clusterIP ?? '') && ipsSame) {
    if (ip === '') delete s.clusterIPs;
    else s.clusterIPs = [ip];
  } else if (!ipsSame && ip === (o.clusterIP ?? '') && ips.length > 0) {
    s.clusterIP = ips[0];
  }
}

/**
 * Upstream patchAllocatedValues (service REST update): values the API server allocated and the
 * client omitted (`clusterIP(s)`, `nodePort`s matched by port+protocol, `healthCheckNodePort`)
 * are copied from the stored object, so `kubectl apply` of the original manifest keeps them.
 */
export function carryAllocatedServiceValues(svc: Service, old: Service): void {
  const s = svc.spec;
  const o = old.spec;
  if (!s || !o) return;
  const needsIP = (t?: string): boolean => t !== 'ExternalName';
  if (needsIP(s.type) && needsIP(o.type)) {
    if (!s.clusterIP && o.clusterIP) s.clusterIP = o.clusterIP;
    if ((s.clusterIPs?.length ?? 0) === 0 && o.clusterIPs?.length) s.clusterIPs = [...o.clusterIPs];
  }
  const needsNodePorts = (x: Service['spec']): boolean => x?.type === 'NodePort'
    || (x?.type === 'LoadBalancer' && x.allocateLoadBalancerNodePorts !== false);
  if (needsNodePorts(s) && needsNodePorts(o)) {
    for (const p of s.ports ?? []) {
      if (p.nodePort) continue;
      const prev = (o.ports ?? []).find((q) => q.port === p.port
        && (q.protocol ?? 'TCP') === (p.protocol ?? 'TCP'));
      if (prev?.nodePort) p.nodePort = prev.nodePort;
    }
  }
  if (s.type === 'LoadBalancer' && s.externalTrafficPolicy === 'Local' && !s.healthCheckNodePort
    && o.healthCheckNodePort) {
    s.healthCheckNodePort = o.healthCheckNodePort;
  }
}

export function defaultEndpoints(ep: Endpoints): void {
  for (const ss of ep.subsets ?? []) {
    for (const p of ss.ports ?? []) p.protocol ??= 'TCP';
  }
}
