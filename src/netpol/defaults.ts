// Upstream pkg/apis/networking/v1 defaults: SetDefaults_NetworkPolicy (policyTypes: Ingress
// always, Egress when egress rules exist; only when policyTypes is empty) and
// SetDefaults_NetworkPolicyPort (protocol TCP). Mutates in place; idempotent.

import type { NetworkPolicy, NetworkPolicyPort } from './types.js';

function defaultPorts(ports: NetworkPolicyPort[] | undefined): void {
  for (const p of ports ?? []) if (p.protocol === undefined || p.protocol === '') p.protocol = 'TCP';
}

export function defaultNetworkPolicy(np: NetworkPolicy): void {
  if (!np.spec) return;
  if (!np.spec.podSelector) np.spec.podSelector = {};
  for (const r of np.spec.ingress ?? []) defaultPorts(r.ports);
  for (const r of np.spec.egress ?? []) defaultPorts(r.ports);
  if (!np.spec.policyTypes || np.spec.policyTypes.length === 0) {
    np.spec.policyTypes = (np.spec.egress ?? []).length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}
