// Upstream pkg/apis/networking/validation ValidateNetworkPolicy / ValidateNetworkPolicyUpdate
// (v1.33): field paths, cause types and wording as upstream's. Run after `defaultNetworkPolicy`.

import type { LabelSelector } from '../api/types/meta.js';
import { parseCIDR } from '../api/net.js';
import {
  child, index, nameIsDNSSubdomain, validateCIDR, validateLabelSelector, validateObjectMeta,
  validateObjectMetaUpdate,
} from '../api/validation/common.js';
import {
  type Cause, forbidden, invalid, invalidEach, notSupported, required,
} from '../api/validation/field-errors.js';
import { isValidPortName, isValidPortNum } from '../api/validation/names.js';
import type {
  IPBlock, NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort, NetworkPolicySpec,
} from './types.js';

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const POLICY_TYPES = ['Ingress', 'Egress'];

export function validateNetworkPolicyPort(port: NetworkPolicyPort, path: string): Cause[] {
  const out: Cause[] = [];
  if (port.protocol !== undefined && !PROTOCOLS.includes(port.protocol)) {
    out.push(notSupported(child(path, 'protocol'), port.protocol, PROTOCOLS));
  }
  const endPath = child(path, 'endPort');
  if (port.port === undefined) {
    if (port.endPort !== undefined) {
      out.push(invalid(endPath, port.endPort, 'may not be specified when `port` is not specified'));
    }
    return out;
  }
  if (typeof port.port === 'number') {
    out.push(...invalidEach(child(path, 'port'), port.port, isValidPortNum(port.port)));
    if (port.endPort !== undefined) {
      if (port.endPort < port.port) {
        out.push(invalid(endPath, port.endPort, 'must be greater than or equal to `port`'));
      }
      out.push(...invalidEach(endPath, port.endPort, isValidPortNum(port.endPort)));
    }
    return out;
  }
  if (port.endPort !== undefined) {
    out.push(invalid(endPath, port.endPort, 'may not be specified when `port` is non-numeric'));
  }
  out.push(...invalidEach(child(path, 'port'), port.port, isValidPortName(port.port)));
  return out;
}

/** `allowed`: CIDRs present in the old object, accepted without revalidation (upstream). */
export function validateIPBlock(ipb: IPBlock, path: string, allowed: readonly string[] = [])
  : Cause[] {
  if (!ipb.cidr) return [required(child(path, 'cidr'))];
  const check = (v: string, p: string): Cause[] => (allowed.includes(v) ? [] : validateCIDR(v, p));
  const out = check(ipb.cidr, child(path, 'cidr'));
  const net = parseCIDR(ipb.cidr);
  if (!net) return out;
  (ipb.except ?? []).forEach((e, i) => {
    const p = index(child(path, 'except'), i);
    out.push(...check(e, p));
    const ex = parseCIDR(e);
    if (!ex) return;
    const contained = ex.family === net.family && net.prefix < ex.prefix
      && (ex.base >> BigInt(bits(net.family) - net.prefix))
        === (net.base >> BigInt(bits(net.family) - net.prefix));
    if (!contained) out.push(invalid(p, e, 'must be a strict subset of `cidr`'));
  });
  return out;
}

const bits = (f: string): number => (f === 'IPv4' ? 32 : 128);

export function validateNetworkPolicyPeer(peer: NetworkPolicyPeer, path: string,
  allowed: readonly string[] = []): Cause[] {
  const out: Cause[] = [];
  let n = 0;
  if (peer.podSelector) {
    n++;
    out.push(...validateLabelSelector(peer.podSelector, child(path, 'podSelector')));
  }
  if (peer.namespaceSelector) {
    n++;
    out.push(...validateLabelSelector(peer.namespaceSelector, child(path, 'namespaceSelector')));
  }
  if (peer.ipBlock) {
    n++;
    out.push(...validateIPBlock(peer.ipBlock, child(path, 'ipBlock'), allowed));
  }
  if (n === 0) out.push(required(path, 'must specify a peer'));
  else if (n > 1 && peer.ipBlock) {
    out.push(forbidden(path, 'may not specify both ipBlock and another peer'));
  }
  return out;
}

export function validateNetworkPolicySpec(spec: NetworkPolicySpec | undefined, path: string,
  allowed: readonly string[] = []): Cause[] {
  const s = spec ?? ({ podSelector: {} } as NetworkPolicySpec);
  const out = validateLabelSelector(s.podSelector as LabelSelector, child(path, 'podSelector'));
  const rules = (kind: 'ingress' | 'egress', peers: 'from' | 'to'): void => {
    (s[kind] ?? []).forEach((rule, i) => {
      const rp = index(child(path, kind), i);
      (rule.ports ?? []).forEach((port, j) => {
        out.push(...validateNetworkPolicyPort(port, index(child(rp, 'ports'), j)));
      });
      const list = (rule as Record<string, NetworkPolicyPeer[] | undefined>)[peers] ?? [];
      list.forEach((peer, j) => {
        out.push(...validateNetworkPolicyPeer(peer, index(child(rp, peers), j), allowed));
      });
    });
  };
  rules('ingress', 'from');
  rules('egress', 'to');
  const types = s.policyTypes ?? [];
  const tp = child(path, 'policyTypes');
  if (types.length > POLICY_TYPES.length) {
    const shown = `[]networking.PolicyType{${types.map((t) => JSON.stringify(t)).join(', ')}}`;
    out.push({ field: tp, reason: 'FieldValueInvalid',
      message: `Invalid value: ${shown}: may not specify more than two policyTypes` });
    return out;
  }
  types.forEach((t, i) => {
    if (!POLICY_TYPES.includes(t)) out.push(notSupported(index(tp, i), t, POLICY_TYPES));
  });
  return out;
}

const META = { namespaced: true, nameFn: nameIsDNSSubdomain };

export function validateNetworkPolicy(np: NetworkPolicy): Cause[] {
  return [...validateObjectMeta(np.metadata, META), ...validateNetworkPolicySpec(np.spec, 'spec')];
}

function cidrsOf(np: NetworkPolicy): string[] {
  const out: string[] = [];
  const add = (peers: NetworkPolicyPeer[] | undefined): void => {
    for (const p of peers ?? []) {
      if (p.ipBlock) out.push(p.ipBlock.cidr, ...(p.ipBlock.except ?? []));
    }
  };
  for (const r of np.spec?.ingress ?? []) add(r.from);
  for (const r of np.spec?.egress ?? []) add(r.to);
  return out;
}

/** Old CIDRs stay accepted even when they would now be refused, as upstream. */
export function validateNetworkPolicyUpdate(np: NetworkPolicy, old: NetworkPolicy): Cause[] {
  return [...validateObjectMetaUpdate(np.metadata, old.metadata),
    ...validateNetworkPolicySpec(np.spec, 'spec', cidrsOf(old))];
}
