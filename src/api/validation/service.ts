// Service validation as upstream ValidateService / ValidateServiceUpdate (v1.33): ports, type,
// session affinity, traffic policies, external IPs and source ranges, cluster IPs and families.
// Allocation (clusterIP from the range, nodePort range) is the API server's job, before this.

import type { Service, ServicePort } from '../types.js';
import { parseIP } from '../net.js';
import { isExternallyAccessible } from '../defaults/service.js';
import {
  type Cause, duplicate, forbidden, invalid, notSupported, required, invalidEach,
} from './field-errors.js';
import {
  child, index, nameIsDNS1035Label, validateCIDR, validateIP, validateLabels,
  validateNonSpecialIP, validateObjectMeta, validateObjectMetaUpdate,
} from './common.js';
import {
  isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidPortName, isValidPortNum,
} from './names.js';
import { PROTOCOLS } from './pod.js';

const TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const AFFINITIES = ['ClientIP', 'None'];
const POLICIES = ['Cluster', 'Local'];
const FAMILIES = ['IPv4', 'IPv6'];
const FAMILY_POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];
const LB_ONLY = "may only be used when `type` is 'LoadBalancer'";

/** Upstream isHeadlessService: clusterIPs is exactly ["None"]. */
const isHeadless = (svc: Service): boolean =>
  svc.spec?.clusterIPs?.length === 1 && svc.spec.clusterIPs[0] === 'None';

/** Go's %#v of the (protocol, port) key upstream reports duplicate ports with. */
function portKey(p: ServicePort): string {
  return `core.ServicePort{Name:"", Protocol:${JSON.stringify(p.protocol ?? '')}, `
    + 'AppProtocol:(*string)(nil), Port:' + p.port + ', TargetPort:intstr.IntOrString'
    + '{Type:0, IntVal:0, StrVal:""}, NodePort:0}';
}

function validatePort(p: ServicePort, requireName: boolean, names: Set<string>, path: string)
  : Cause[] {
  const out: Cause[] = [];
  if (requireName && !p.name) out.push(required(child(path, 'name'), ''));
  else if (p.name) {
    out.push(...invalidEach(child(path, 'name'), p.name, isDNS1123Label(p.name)));
    if (names.has(p.name)) out.push(duplicate(child(path, 'name'), p.name));
    names.add(p.name);
  }
  out.push(...invalidEach(child(path, 'port'), p.port ?? 0, isValidPortNum(p.port)));
  if (!p.protocol) out.push(required(child(path, 'protocol'), ''));
  else if (!PROTOCOLS.includes(p.protocol)) out.push(notSupported(child(path, 'protocol'),
    p.protocol, PROTOCOLS));
  const tp = p.targetPort;
  const tpPath = child(path, 'targetPort');
  if (typeof tp === 'number') out.push(...invalidEach(tpPath, tp, isValidPortNum(tp)));
  else if (typeof tp === 'string') out.push(...invalidEach(tpPath, tp, isValidPortName(tp)));
  if (p.appProtocol) {
    out.push(...invalidEach(child(path, 'appProtocol'), p.appProtocol,
      isQualifiedName(p.appProtocol)));
  }
  return out;
}


function validateAffinity(svc: Service): Cause[] {
  const s = svc.spec!;
  const out: Cause[] = [];
  if (!s.sessionAffinity) out.push(required('spec.sessionAffinity', ''));
  else if (!AFFINITIES.includes(s.sessionAffinity)) {
    out.push(notSupported('spec.sessionAffinity', s.sessionAffinity, AFFINITIES));
  }
  const cfgPath = 'spec.sessionAffinityConfig';
  if (s.sessionAffinity === 'ClientIP') {
    const why = 'when session affinity type is ClientIP';
    const t = s.sessionAffinityConfig?.clientIP?.timeoutSeconds;
    if (!s.sessionAffinityConfig) out.push(required(cfgPath, why));
    else if (!s.sessionAffinityConfig.clientIP) out.push(required(`${cfgPath}.clientIP`, why));
    else if (t === undefined) out.push(required(`${cfgPath}.clientIP.timeoutSeconds`, why));
    else if (t <= 0 || t > 86400) {
      out.push(invalid(`${cfgPath}.clientIP.timeoutSeconds`, t,
        'must be greater than 0 and less than 86400'));
    }
  } else if (s.sessionAffinity === 'None' && s.sessionAffinityConfig) {
    out.push(forbidden(cfgPath, 'must not be set when session affinity is None'));
  }
  return out;
}




/** Upstream ValidateServiceClusterIPsRelatedFields (not called for ExternalName). */
function validateClusterIPs(svc: Service): Cause[] {
  const s = svc.spec!;
  const out: Cause[] = [];
  const ips = s.clusterIPs ?? [];
  const ipsPath = 'spec.clusterIPs';
  if (s.clusterIP) {
    if (ips.length === 0) out.push(required(ipsPath, ''));
    else if (ips[0] !== s.clusterIP) {
      out.push(invalid(ipsPath, ips, 'first value must match `clusterIP`'));
    }
  } else if (ips.length > 0) {
    out.push(invalid(ipsPath, ips, 'must be empty when `clusterIP` is not specified'));
  }
  const seen = new Set<string>();
  (s.ipFamilies ?? []).forEach((f, i) => {
    if (!FAMILIES.includes(f)) out.push(notSupported(index('spec.ipFamilies', i), f, FAMILIES));
    if (seen.has(f)) out.push(duplicate(index('spec.ipFamilies', i), f));
    seen.add(f);
  });
  if (s.ipFamilyPolicy !== undefined && !FAMILY_POLICIES.includes(s.ipFamilyPolicy)) {
    out.push(notSupported('spec.ipFamilyPolicy', s.ipFamilyPolicy, FAMILY_POLICIES));
  }
  let bad = false;
  ips.forEach((ip, i) => {
    if (i === 0 && ip === 'None') {
      if (ips.length > 1) {
        bad = true;
        out.push(invalid(ipsPath, ips, "'None' must be the first and only value"));
      }
      return;
    }
    const errs = validateIP(ip, index(ipsPath, i));
    if (errs.length > 0) bad = true;
    out.push(...errs);
  });
  if (ips.length > 2) out.push(invalid(ipsPath, ips, 'may only hold up to 2 values'));
  if (bad) return out;
  if (ips.length > 1) {
    const fams = new Set(ips.map((ip) => parseIP(ip)!.family));
    if (fams.size !== ips.length) {
      out.push(invalid(ipsPath, ips, 'may specify no more than one IP for each IP family'));
    }
  }
  if (!isHeadless(svc)) {
    ips.forEach((ip, i) => {
      const fam = s.ipFamilies?.[i];
      if (fam !== 'IPv4' && fam !== 'IPv6') return;
      if ((parseIP(ip)?.family === 'IPv6') !== (fam === 'IPv6')) {
        out.push(invalid(index(ipsPath, i), ip,
          `expected an ${fam} value as indicated by \`ipFamilies[${i}]\``));
      }
    });
  }
  return out;
}

/** The `switch service.Spec.Type` block of upstream ValidateService. */
function validateTypeSpecific(svc: Service): Cause[] {
  const s = svc.spec!;
  const out: Cause[] = [];
  if ((s.type === 'LoadBalancer' || s.type === 'NodePort') && isHeadless(svc)) {
    out.push(invalid('spec.clusterIPs[0]', s.clusterIPs?.[0] ?? 'None',
      `may not be set to 'None' for ${s.type} services`));
  }
  if (s.type !== 'ExternalName') return out;
  const why = 'may not be set for ExternalName services';
  if (s.clusterIPs?.length) out.push(forbidden('spec.clusterIPs', why));
  if (s.ipFamilies?.length) out.push(forbidden('spec.ipFamilies', why));
  if (s.ipFamilyPolicy) out.push(forbidden('spec.ipFamilyPolicy', why));
  const cname = (s.externalName ?? '').replace(/\.$/, '');
  if (cname === '') out.push(required('spec.externalName', ''));
  else out.push(...invalidEach('spec.externalName', cname, isDNS1123Subdomain(cname)));
  return out;
}

/** ClusterIP nodePorts, duplicate nodePorts and duplicate (protocol, port) pairs. */
function validatePortSets(svc: Service): Cause[] {
  const s = svc.spec!;
  const ports = s.ports ?? [];
  const out: Cause[] = [];
  if (s.type === 'ClusterIP') {
    ports.forEach((p, i) => {
      if (!p.nodePort) return;
      out.push(forbidden(`spec.ports[${i}].nodePort`,
        "may not be used when `type` is 'ClusterIP'"));
    });
  }
  const nodePorts = new Set<string>();
  ports.forEach((p, i) => {
    if (!p.nodePort) return;
    const k = `${p.protocol}/${p.nodePort}`;
    if (nodePorts.has(k)) out.push(duplicate(`spec.ports[${i}].nodePort`, p.nodePort));
    nodePorts.add(k);
  });
  const keys = new Set<string>();
  ports.forEach((p, i) => {
    const k = `${p.protocol}/${p.port}`;
    if (keys.has(k)) {
      out.push({ ...duplicate(`spec.ports[${i}]`, ''), message: `Duplicate value: ${portKey(p)}` });
    }
    keys.add(k);
  });
  return out;
}

function validateLoadBalancerFields(svc: Service): Cause[] {
  const s = svc.spec!;
  const out: Cause[] = [];
  const ranges = s.loadBalancerSourceRanges ?? [];
  if (ranges.length > 0) {
    // Upstream's path really is capitalised here.
    const p = 'spec.LoadBalancerSourceRanges';
    if (s.type !== 'LoadBalancer') out.push(forbidden(p, LB_ONLY));
    ranges.forEach((r, i) => out.push(...validateCIDR(r.trim(), index(p, i))));
  }
  if (s.allocateLoadBalancerNodePorts !== undefined && s.type !== 'LoadBalancer') {
    out.push(forbidden('spec.allocateLoadBalancerNodePorts', LB_ONLY));
  }
  if (s.type === 'LoadBalancer' && s.allocateLoadBalancerNodePorts === undefined) {
    // Upstream's path really lacks `spec.` here.
    out.push(required('allocateLoadBalancerNodePorts', ''));
  }
  if (s.loadBalancerClass !== undefined) {
    if (s.type !== 'LoadBalancer') out.push(forbidden('spec.loadBalancerClass', LB_ONLY));
    else {
      out.push(...invalidEach('spec.loadBalancerClass', s.loadBalancerClass,
        isQualifiedName(s.loadBalancerClass)));
    }
  }
  return out;
}

const needsHealthCheck = (svc: Service): boolean =>
  svc.spec?.type === 'LoadBalancer' && svc.spec.externalTrafficPolicy === 'Local';

function validateTrafficPolicies(svc: Service): Cause[] {
  const s = svc.spec!;
  const out: Cause[] = [];
  const etp = s.externalTrafficPolicy;
  const etpPath = 'spec.externalTrafficPolicy';
  if (!isExternallyAccessible(svc)) {
    if (etp) out.push(invalid(etpPath, etp, 'may only be set for externally-accessible services'));
  } else if (!etp) out.push(required(etpPath, ''));
  else if (!POLICIES.includes(etp)) out.push(notSupported(etpPath, etp, POLICIES));
  const hc = s.healthCheckNodePort;
  const hcPath = 'spec.healthCheckNodePort';
  if (!needsHealthCheck(svc)) {
    if (hc) {
      out.push(invalid(hcPath, hc,
        "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"));
    }
  } else if (!hc) out.push(required(hcPath, ''));
  else out.push(...invalidEach(hcPath, hc, isValidPortNum(hc)));
  const itp = s.internalTrafficPolicy;
  if (!itp && s.type !== 'ExternalName') out.push(required('spec.internalTrafficPolicy', ''));
  if (itp && !POLICIES.includes(itp)) {
    out.push(notSupported('spec.internalTrafficPolicy', itp, POLICIES));
  }
  if (s.trafficDistribution !== undefined && s.trafficDistribution !== 'PreferClose') {
    out.push(notSupported('spec.trafficDistribution', s.trafficDistribution, ['PreferClose']));
  }
  return out;
}

/** Upstream ValidateService, in upstream's order. Allocation must already have happened. */
export function validateService(svc: Service): Cause[] {
  const out = validateObjectMeta(svc.metadata, { namespaced: true, nameFn: nameIsDNS1035Label });
  if (!svc.spec) return [...out, required('spec', '')];
  const s = svc.spec;
  const ports = s.ports ?? [];
  if (ports.length === 0 && !isHeadless(svc) && s.type !== 'ExternalName') {
    out.push(required('spec.ports', ''));
  }
  out.push(...validateTypeSpecific(svc));
  const names = new Set<string>();
  ports.forEach((p, i) => {
    out.push(...validatePort(p, ports.length > 1, names, index('spec.ports', i)));
  });
  out.push(...validateLabels(s.selector, 'spec.selector'));
  out.push(...validateAffinity(svc));
  if (s.type !== 'ExternalName') out.push(...validateClusterIPs(svc));
  (s.externalIPs ?? []).forEach((ip, i) => {
    out.push(...validateNonSpecialIP(ip, index('spec.externalIPs', i)));
  });
  if (!s.type) out.push(required('spec.type', ''));
  else if (!TYPES.includes(s.type)) out.push(notSupported('spec.type', s.type, TYPES));
  out.push(...validatePortSets(svc), ...validateLoadBalancerFields(svc));
  out.push(...validateTrafficPolicies(svc));
  return out;
}

/** Upstream validateUpgradeDowngradeClusterIPs. */
function validateClusterIPsUpdate(svc: Service, old: Service): Cause[] {
  if (isHeadless(svc) && isHeadless(old)) return [];
  const out: Cause[] = [];
  const ips = svc.spec?.clusterIPs ?? [];
  const oldIPs = old.spec?.clusterIPs ?? [];
  const p = 'spec.clusterIPs';
  const changed = 'may not change once set';
  if (oldIPs.length === ips.length) {
    oldIPs.forEach((ip, i) => { if (ip !== ips[i]) out.push(invalid(index(p, i), ips, changed)); });
  } else if (oldIPs.length > ips.length) {
    if (ips.length === 0) out.push(invalid(`${p}[0]`, ips, 'primary clusterIP can not be unset'));
    if (ips.length > 0 && ips[0] !== oldIPs[0]) out.push(invalid(`${p}[0]`, ips, changed));
    if (ips.length === 1 && svc.spec?.ipFamilyPolicy !== 'SingleStack') {
      out.push(invalid('spec.ipFamilyPolicy', svc.spec?.ipFamilyPolicy ?? null,
        "must be set to 'SingleStack' when releasing the secondary clusterIP"));
    }
  } else if (oldIPs.length > 0 && ips[0] !== oldIPs[0]) {
    out.push(invalid(`${p}[0]`, ips, changed));
  }
  return out;
}

/** Upstream validateUpgradeDowngradeIPFamilies. */
function validateIPFamiliesUpdate(svc: Service, old: Service): Cause[] {
  if (isHeadless(svc) !== isHeadless(old) || isHeadless(svc)) return [];
  const out: Cause[] = [];
  const fams = svc.spec?.ipFamilies ?? [];
  const oldFams = old.spec?.ipFamilies ?? [];
  const ips = svc.spec?.clusterIPs ?? [];
  const p = 'spec.ipFamilies[0]';
  const changed = 'may not change once set';
  if (oldFams.length === fams.length) {
    oldFams.forEach((f, i) => { if (f !== fams[i]) out.push(invalid(p, fams, changed)); });
  } else if (oldFams.length > fams.length) {
    if (ips.length === 0) out.push(invalid(p, fams, 'primary ipFamily can not be unset'));
    if (fams.length > 0 && fams[0] !== oldFams[0]) out.push(invalid(p, ips, changed));
    if (fams.length === 1 && svc.spec?.ipFamilyPolicy !== 'SingleStack') {
      out.push(invalid('spec.ipFamilyPolicy', svc.spec?.ipFamilyPolicy ?? null,
        "must be set to 'SingleStack' when releasing the secondary ipFamily"));
    }
  } else if (oldFams.length > 0 && fams.length > 0 && fams[0] !== oldFams[0]) {
    out.push(invalid(p, ips, changed));
  }
  return out;
}

/**
 * Upstream ValidateServiceUpdate: cluster IPs and the primary family are fixed once set (unless
 * the type changes from or to ExternalName), and so is an allocated healthCheckNodePort.
 */
export function validateServiceUpdate(svc: Service, old: Service): Cause[] {
  const out = validateObjectMetaUpdate(svc.metadata, old.metadata);
  const s = svc.spec ?? {};
  const o = old.spec ?? {};
  if (s.type !== 'ExternalName' && o.type !== 'ExternalName') {
    out.push(...validateClusterIPsUpdate(svc, old), ...validateIPFamiliesUpdate(svc, old));
  }
  if (s.type === 'LoadBalancer' && o.type === 'LoadBalancer'
    && (s.loadBalancerClass ?? null) !== (o.loadBalancerClass ?? null)) {
    out.push(invalid('spec.loadBalancerClass', s.loadBalancerClass ?? null,
      'may not change once set'));
  }
  if (needsHealthCheck(svc) && needsHealthCheck(old)
    && s.healthCheckNodePort !== o.healthCheckNodePort) {
    out.push(forbidden('spec.healthCheckNodePort', 'field is immutable'));
  }
  return [...out, ...validateService(svc)];
}

/** Upstream ValidateServiceStatusUpdate: load-balancer ingress entries. */
export function validateServiceStatusUpdate(svc: Service, old: Service): Cause[] {
  const out = validateObjectMetaUpdate(svc.metadata, old.metadata);
  const ingress = svc.status?.loadBalancer?.ingress ?? [];
  const base = 'status.loadBalancer.ingress';
  if (svc.spec?.type !== 'LoadBalancer' && ingress.length > 0) {
    return [...out, forbidden(base, "may only be used when `spec.type` is 'LoadBalancer'")];
  }
  ingress.forEach((ing, i) => {
    const p = index(base, i);
    if (ing.ip) out.push(...validateIP(ing.ip, child(p, 'ip')));
    if (ing.ip && !ing.ipMode) {
      out.push(required(child(p, 'ipMode'), 'must be specified when `ip` is set'));
    } else if (ing.ipMode && !ing.ip) {
      out.push(forbidden(child(p, 'ipMode'), 'may not be specified when `ip` is not set'));
    } else if (ing.ipMode && ing.ipMode !== 'VIP' && ing.ipMode !== 'Proxy') {
      out.push(notSupported(child(p, 'ipMode'), ing.ipMode, ['Proxy', 'VIP']));
    }
    if (ing.hostname) {
      out.push(...invalidEach(child(p, 'hostname'), ing.hostname,
        isDNS1123Subdomain(ing.hostname)));
      if (parseIP(ing.hostname)) {
        out.push(invalid(child(p, 'hostname'), ing.hostname,
          'must be a DNS name, not an IP address'));
      }
    }
  });
  return out;
}
