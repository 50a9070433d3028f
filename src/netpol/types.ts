// networking.k8s.io/v1 NetworkPolicy, as the API defines it (v1.33). Pure data.

import type { IntOrString, LabelSelector, TypedObject } from '../api/types/meta.js';

export type PolicyType = 'Ingress' | 'Egress';
export type NetpolProtocol = 'TCP' | 'UDP' | 'SCTP';

export interface IPBlock {
  cidr: string;
  except?: string[];
}

export interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: IPBlock;
}

export interface NetworkPolicyPort {
  protocol?: string;
  /** A port number or a named container port of the selected (destination) pod. */
  port?: IntOrString;
  /** Upper bound of a range starting at `port` (numeric `port` only). */
  endPort?: number;
}

export interface NetworkPolicyIngressRule {
  ports?: NetworkPolicyPort[];
  from?: NetworkPolicyPeer[];
}

export interface NetworkPolicyEgressRule {
  ports?: NetworkPolicyPort[];
  to?: NetworkPolicyPeer[];
}

export interface NetworkPolicySpec {
  podSelector: LabelSelector;
  ingress?: NetworkPolicyIngressRule[];
  egress?: NetworkPolicyEgressRule[];
  policyTypes?: string[];
}

export interface NetworkPolicy extends TypedObject {
  spec: NetworkPolicySpec;
}

export const NETPOL_API_VERSION = 'networking.k8s.io/v1';
