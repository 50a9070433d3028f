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
  if (s.type === 'NodePort' || s.type === 'LoadBalancer') s.externalTrafficPolicy ??= 'Cluster';
  if (s.type !== 'ExternalName') s.internalTrafficPolicy ??= 'Cluster';
  if (s.type === 'LoadBalancer') s.allocateLoadBalancerNodePorts ??= true;
  if (s.type !== 'ExternalName' && s.ipFamilyPolicy === undefined) {
    const headlessNoSelector = s.clusterIP === 'None'
      && Object.keys(s.selector ?? {}).length === 0;
    s.ipFamilyPolicy = headlessNoSelector ? 'RequireDualStack' : 'SingleStack';
  }
}

export function defaultEndpoints(ep: Endpoints): void {
  for (const ss of ep.subsets ?? []) {
    for (const p of ss.ports ?? []) p.protocol ??= 'TCP';
  }
}
