// The cluster's Service CIDRs: parsing the configured ranges (`--service-cluster-ip-range`) and
// the default ServiceCIDR object `kubernetes` the API server keeps in sync with them, as
// upstream's defaultservicecidr controller does. The first CIDR is the primary family.

import { kdpError } from '../errors.js';
import { canonicalCIDR, cidrList, familyBits, nthAddress, parseCIDR, type IPFamily } from './net.js';
import type { ServiceCIDR } from './types.js';

/** Upstream DefaultServiceCIDRName. */
export const DEFAULT_SERVICE_CIDR_NAME = 'kubernetes';

/** Upstream validateMaxCIDRRange: a Service range holds at most 2^20 addresses (either family). */
const MAX_SERVICE_CIDR_BITS = 20;

/** Index of the `kubernetes` Service's clusterIP in the primary range (10.96.0.1). */
export const API_SERVICE_IP_INDEX = 1;
/** Index kdp (like kubeadm) gives cluster DNS in the primary range (10.96.0.10). */
export const DNS_SERVICE_IP_INDEX = 10;

/**
 * Validates and canonicalises the configured ranges: one CIDR, or two of different families.
 * Accepts `"10.96.0.0/12,fd00::/108"` or an array. Throws KDP_CONFIG naming the problem.
 */
export function parseServiceCIDRs(input: string | readonly string[]): string[] {
  const list = cidrList(input);
  const bad = (msg: string): never => {
    throw kdpError('KDP_CONFIG', `--service-cluster-ip-range: ${msg}`);
  };
  if (list.length === 0) bad('at least one CIDR is required');
  if (list.length > 2) bad('may contain at most one CIDR per IP family (two in all)');
  const out = list.map((s, i) => {
    const c = parseCIDR(s);
    if (!c) return bad(`"${s}" is not a valid CIDR`);
    const bits = familyBits(c.family);
    if (bits - c.prefix > MAX_SERVICE_CIDR_BITS) {
      const flag = i === 0 ? '--service-cluster-ip-range' : '--secondary-service-cluster-ip-range';
      bad(`specified ${flag} is too large; for ${bits}-bit addresses, `
        + `the mask must be >= ${bits - MAX_SERVICE_CIDR_BITS}`);
    }
    if (c.prefix > (c.family === 'IPv4' ? 30 : 126)) bad(`"${s}" is too small for services`);
    return canonicalCIDR(s)!;
  });
  if (out.length === 2 && parseCIDR(out[0]!)!.family === parseCIDR(out[1]!)!.family) {
    bad('dual-stack ranges must be of different IP families');
  }
  return out;
}

/** IP families of the ranges, primary first. */
export function serviceIPFamilies(cidrs: readonly string[]): IPFamily[] {
  return cidrs.map((c) => parseCIDR(c)!.family);
}

/** The `kubernetes` Service clusterIP: the first usable address of the primary range. */
export function apiServiceIP(cidrs: readonly string[]): string {
  return nthAddress(cidrs[0]!, API_SERVICE_IP_INDEX);
}

/** The cluster DNS Service clusterIP (primary range, offset 10). */
export function dnsServiceIP(cidrs: readonly string[]): string {
  return nthAddress(cidrs[0]!, DNS_SERVICE_IP_INDEX);
}

/**
 * The default ServiceCIDR object for `cidrs`, with the Ready condition upstream sets once the
 * object matches the configuration. `now` is an RFC 3339 timestamp (passed in for determinism).
 */
export function buildDefaultServiceCIDR(cidrs: readonly string[], now: string): ServiceCIDR {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'ServiceCIDR',
    metadata: { name: DEFAULT_SERVICE_CIDR_NAME },
    spec: { cidrs: [...cidrs] },
    status: {
      conditions: [{
        type: 'Ready',
        status: 'True',
        lastTransitionTime: now,
        reason: '',
        message: 'Kubernetes default Service CIDR is ready',
      }],
    },
  };
}
