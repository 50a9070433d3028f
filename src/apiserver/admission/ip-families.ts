// Upstream's initIPFamilyFields (service REST alloc.go), reduced to what kdp serves: derive
// `spec.ipFamilies` from requested clusterIPs, the policy and the cluster's families.

import { ipFamilyOf, type IPFamily } from '../../api/net.js';
import type { Service } from '../../api/types.js';
import { invalid, type Cause } from '../../api/validation/field-errors.js';

function other(f: IPFamily): IPFamily {
  return f === 'IPv4' ? 'IPv6' : 'IPv4';
}

/** Sets `spec.ipFamilies`; returns causes for what cannot be served (caller throws 422). */
export function initIPFamilies(svc: Service, clusterFamilies: readonly IPFamily[]): Cause[] {
  const s = svc.spec ?? (svc.spec = {});
  if (s.type === 'ExternalName') return [];
  const dualCluster = clusterFamilies.length > 1;
  const policy = s.ipFamilyPolicy ?? 'SingleStack';
  const families = [...(s.ipFamilies ?? [])];
  if (s.clusterIP === 'None' && Object.keys(s.selector ?? {}).length === 0) {
    // headless and selectorless: any families are acceptable
    if (families.length === 0) families.push(clusterFamilies[0]!);
    if (policy !== 'SingleStack' && dualCluster && families.length === 1) {
      families.push(other(families[0]!));
    }
    s.ipFamilies = families;
    return [];
  }
  const causes: Cause[] = [];
  (s.clusterIPs ?? []).forEach((ip, i) => {
    const fam = ip === 'None' ? undefined : ipFamilyOf(ip);
    if (!fam) return;
    if (families[i] !== undefined && families[i] !== fam) {
      causes.push(invalid(`spec.ipFamilies[${i}]`, families[i],
        `must match the IP family of spec.clusterIPs[${i}]`));
    }
    families[i] = fam;
  });
  if (policy === 'RequireDualStack' && !dualCluster) {
    causes.push(invalid('spec.ipFamilyPolicy', policy,
      'this cluster is not configured for dual-stack services'));
  }
  families.forEach((f, i) => {
    if (!clusterFamilies.includes(f)) {
      causes.push(invalid(`spec.ipFamilies[${i}]`, f, 'not configured on this cluster'));
    }
  });
  if (families.length === 0) families.push(clusterFamilies[0]!);
  if (policy !== 'SingleStack' && dualCluster && families.length === 1) {
    families.push(other(families[0]!));
  }
  s.ipFamilies = families;
  return causes;
}
