// Policy builders mirroring upstream's test/e2e/network/netpol/policies.go helpers:
// SetSpecIngressRules / SetSpecEgressRules append rules AND the policy type (so a policy built
// with egress rules only is Egress-only, as upstream's).

import type { LabelSelector } from '../../../src/api/types.js';
import type {
  NetworkPolicy, NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer,
  NetworkPolicyPort,
} from '../../../src/netpol/types.js';
import type { Reachability } from '../../../src/netpol/truth-table.js';

export type Tweak = (p: NetworkPolicy) => void;

export function ingress(...rules: NetworkPolicyIngressRule[]): Tweak {
  return (p) => {
    p.spec.ingress = [...(p.spec.ingress ?? []), ...rules];
    p.spec.policyTypes = [...(p.spec.policyTypes ?? []), 'Ingress'];
  };
}

export function egress(...rules: NetworkPolicyEgressRule[]): Tweak {
  return (p) => {
    p.spec.egress = [...(p.spec.egress ?? []), ...rules];
    p.spec.policyTypes = [...(p.spec.policyTypes ?? []), 'Egress'];
  };
}

/** GenNetworkPolicyWithNameAndPodSelector, in namespace `ns`. */
export function policy(ns: string, name: string, podSelector: LabelSelector,
  ...tweaks: Tweak[]): NetworkPolicy {
  const p = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
    metadata: { name, namespace: ns }, spec: { podSelector } } as NetworkPolicy;
  for (const t of tweaks) t(p);
  return p;
}

/** GenNetworkPolicyWithNameAndPodMatchLabel. */
export const policyML = (ns: string, name: string, labels: Record<string, string>,
  ...tweaks: Tweak[]): NetworkPolicy => policy(ns, name, { matchLabels: labels }, ...tweaks);

export const nsSel = (name: string): LabelSelector =>
  ({ matchLabels: { 'kubernetes.io/metadata.name': name } });
export const podSel = (name: string): LabelSelector => ({ matchLabels: { pod: name } });
export const peer = (p: NetworkPolicyPeer): NetworkPolicyPeer => p;
export const port = (p: NetworkPolicyPort): NetworkPolicyPort => p;

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface Check {
  readonly port: number;
  readonly protocol: Protocol;
  /** Builds the expected table on `NewReachability(pods, true)`, as the upstream test does. */
  readonly expect: (r: Reachability) => void;
}

export interface Step {
  /** Create, or replace by namespace/name (upstream UpdatePolicy). */
  readonly apply?: readonly NetworkPolicy[];
  /** `ns/name` of policies to delete; `*` deletes them all (cleanNetworkPolicies). */
  readonly delete?: readonly string[];
  readonly podLabels?: Readonly<Record<string, Record<string, string>>>;
  readonly namespaceLabels?: Readonly<Record<string, Record<string, string>>>;
  readonly checks: readonly Check[];
}

export interface Scenario {
  /** The upstream It() title (or a kdp-added case, prefixed `kdp:`). */
  readonly name: string;
  /** The pods the test creates (initializeResources' model pods). */
  readonly pods: readonly string[];
  readonly steps: readonly Step[];
}
