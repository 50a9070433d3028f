// EndpointSlice, Endpoints, Lease and ServiceCIDR validation as upstream (v1.33).

import type { EndpointSlice, Endpoints, Lease, ServiceCIDR } from '../types.js';
import { parseCIDR, parseIP } from '../net.js';
import {
  type Cause, duplicate, invalid, notSupported, required, tooMany, invalidEach,
} from './field-errors.js';
import {
  child, index, nameIsDNSSubdomain, nonNegative, validateCIDR, validateImmutable, validateLabels,
  validateNonSpecialIP, validateObjectMeta, validateObjectMetaUpdate,
} from './common.js';
import {
  isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue, isValidPortNum,
} from './names.js';
import { PROTOCOLS } from './pod.js';

const META = { namespaced: true, nameFn: nameIsDNSSubdomain };
const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
export const MAX_ENDPOINTS = 1000;
export const MAX_ADDRESSES = 100;
export const MAX_PORTS = 100;

/** Upstream validation.IsFullyQualifiedDomainName. */
function validateFQDN(name: string, path: string): Cause[] {
  if (name === '') return [required(path, '')];
  const n = name.endsWith('.') ? name.slice(0, -1) : name;
  const sub = isDNS1123Subdomain(n);
  if (sub.length > 0) return [invalid(path, n, sub.join(','))];
  const labels = n.split('.');
  if (labels.length < 2) return [invalid(path, n,
    'should be a domain with at least two segments separated by dots')];
  for (const l of labels) {
    const errs = isDNS1123Label(l);
    if (errs.length > 0) return [invalid(path, l, errs.join(','))];
  }
  return [];
}

function validateSliceAddress(addr: string, type: string, path: string): Cause[] {
  if (type === 'IPv4' || type === 'IPv6') {
    if (parseIP(addr)?.family !== type) return [invalid(path, addr,
      `must be a valid ${type} address`)];
    return validateNonSpecialIP(addr, path);
  }
  return type === 'FQDN' ? validateFQDN(addr, path) : [];
}

function validateSliceEndpoints(es: EndpointSlice): Cause[] {
  const eps = es.endpoints ?? [];
  if (eps.length > MAX_ENDPOINTS) return [tooMany('endpoints', eps.length, MAX_ENDPOINTS)];
  const out: Cause[] = [];
  eps.forEach((ep, i) => {
    const p = index('endpoints', i);
    const ap = child(p, 'addresses');
    const addrs = ep.addresses ?? [];
    if (addrs.length === 0) out.push(required(ap, 'must contain at least 1 address'));
    else if (addrs.length > MAX_ADDRESSES) out.push(tooMany(ap, addrs.length, MAX_ADDRESSES));
    addrs.forEach((a, j) => out.push(...validateSliceAddress(a, es.addressType, index(ap, j))));
    if (ep.nodeName) {
      out.push(...invalidEach(child(p, 'nodeName'), ep.nodeName, isDNS1123Subdomain(ep.nodeName)));
    }
    out.push(...validateLabels(ep.deprecatedTopology, child(p, 'deprecatedTopology')));
    if (ep.zone) out.push(...invalidEach(child(p, 'zone'), ep.zone, isValidLabelValue(ep.zone)));
    if (ep.hostname) {
      out.push(...invalidEach(child(p, 'hostname'), ep.hostname, isDNS1123Label(ep.hostname)));
    }
  });
  return out;
}

function validateSlicePorts(es: EndpointSlice): Cause[] {
  const ports = es.ports ?? [];
  if (ports.length > MAX_PORTS) return [tooMany('ports', ports.length, MAX_PORTS)];
  const out: Cause[] = [];
  const names = new Set<string>();
  ports.forEach((pt, i) => {
    const p = index('ports', i);
    const name = pt.name ?? '';
    if (name) out.push(...invalidEach(child(p, 'name'), name, isDNS1123Label(name)));
    if (names.has(name)) out.push(duplicate(child(p, 'name'), name));
    names.add(name);
    if (!pt.protocol) out.push(required(child(p, 'protocol'), ''));
    else if (!PROTOCOLS.includes(pt.protocol)) out.push(notSupported(child(p, 'protocol'),
      pt.protocol, PROTOCOLS));
    if (pt.port !== undefined && pt.port !== null) {
      out.push(...invalidEach(child(p, 'port'), pt.port, isValidPortNum(pt.port)));
    }
    if (pt.appProtocol) {
      out.push(...invalidEach(child(p, 'appProtocol'), pt.appProtocol,
        isQualifiedName(pt.appProtocol)));
    }
  });
  return out;
}

export function validateEndpointSlice(es: EndpointSlice): Cause[] {
  const out = validateObjectMeta(es.metadata, META);
  if (!es.addressType) out.push(required('addressType', ''));
  else if (!ADDRESS_TYPES.includes(es.addressType)) {
    out.push(notSupported('addressType', es.addressType, ADDRESS_TYPES));
  }
  out.push(...validateSliceEndpoints(es), ...validateSlicePorts(es));
  return out;
}

export function validateEndpointSliceUpdate(es: EndpointSlice, old: EndpointSlice): Cause[] {
  return [...validateObjectMetaUpdate(es.metadata, old.metadata), ...validateEndpointSlice(es),
    ...validateImmutable(es.addressType, old.addressType, 'addressType')];
}

export function validateEndpoints(ep: Endpoints): Cause[] {
  const out = validateObjectMeta(ep.metadata, META);
  (ep.subsets ?? []).forEach((ss, i) => {
    const p = index('subsets', i);
    if (!ss.addresses?.length && !ss.notReadyAddresses?.length) {
      out.push(required(p, 'must specify `addresses` or `notReadyAddresses`'));
    }
    for (const f of ['addresses', 'notReadyAddresses'] as const) {
      (ss[f] ?? []).forEach((a, j) => {
        const ap = index(child(p, f), j);
        out.push(...validateNonSpecialIP(a.ip ?? '', child(ap, 'ip')));
        if (a.hostname) out.push(...invalidEach(child(ap, 'hostname'), a.hostname,
          isDNS1123Label(a.hostname)));
        if (a.nodeName) out.push(...invalidEach(child(ap, 'nodeName'), a.nodeName,
          isDNS1123Subdomain(a.nodeName)));
      });
    }
    const ports = ss.ports ?? [];
    ports.forEach((pt, j) => {
      const pp = index(child(p, 'ports'), j);
      if (ports.length > 1 && !pt.name) out.push(required(child(pp, 'name'), ''));
      else if (pt.name) out.push(...invalidEach(child(pp, 'name'), pt.name,
        isDNS1123Label(pt.name)));
      out.push(...invalidEach(child(pp, 'port'), pt.port ?? 0, isValidPortNum(pt.port)));
      if (!pt.protocol) out.push(required(child(pp, 'protocol'), ''));
      else if (!PROTOCOLS.includes(pt.protocol)) out.push(notSupported(child(pp, 'protocol'),
        pt.protocol, PROTOCOLS));
    });
  });
  return out;
}

export function validateLease(l: Lease): Cause[] {
  const out = validateObjectMeta(l.metadata, META);
  const s = l.spec ?? {};
  if (s.leaseDurationSeconds !== undefined && s.leaseDurationSeconds <= 0) {
    out.push(invalid('spec.leaseDurationSeconds', s.leaseDurationSeconds,
      'must be greater than 0'));
  }
  out.push(...nonNegative(s.leaseTransitions, 'spec.leaseTransitions'));
  return out;
}

export function validateServiceCIDR(sc: ServiceCIDR): Cause[] {
  const out = validateObjectMeta(sc.metadata, { namespaced: false, nameFn: nameIsDNSSubdomain });
  const cidrs = sc.spec?.cidrs ?? [];
  const p = 'spec.cidrs';
  if (cidrs.length === 0) return [...out, required(p, 'at least one CIDR required')];
  if (cidrs.length > 2) return [...out, invalid(p, sc.spec, 'may only hold up to 2 values')];
  cidrs.forEach((c, i) => out.push(...validateCIDR(c, index(p, i))));
  if (cidrs.length === 2) {
    const [a, b] = cidrs.map((c) => parseCIDR(c)?.family);
    if (a && b && a === b) {
      out.push(invalid(p, cidrs, 'may specify no more than one IP for each IP family, '
        + 'i.e 192.168.0.0/24 and 2001:db8::/64'));
    }
  }
  return out;
}

export function validateServiceCIDRUpdate(sc: ServiceCIDR, old: ServiceCIDR): Cause[] {
  return [...validateObjectMetaUpdate(sc.metadata, old.metadata), ...validateServiceCIDR(sc),
    ...validateImmutable(sc.spec?.cidrs, old.spec?.cidrs, 'spec.cidrs')];
}
