// The evaluator's view of a cluster: pods, namespaces and (defaulted) policies, reduced to what
// NetworkPolicy semantics read. Built from API objects by `buildModel`.

import type { Namespace, Pod } from '../api/types.js';
import { applyDefaults } from '../api/defaults.js';
import type { NetworkPolicy, NetpolProtocol } from './types.js';

export interface NamedPort {
  readonly name: string;
  readonly port: number;
  readonly protocol: NetpolProtocol;
}

export interface PodInfo {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly ips: readonly string[];
  /** Node name; traffic from this node's IP to the pod is always allowed. */
  readonly node?: string;
  /** Named container ports (upstream resolves named policy ports against these). */
  readonly ports: readonly NamedPort[];
}

export interface NamespaceInfo {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

export interface NetpolModel {
  readonly pods: readonly PodInfo[];
  readonly namespaces: ReadonlyMap<string, NamespaceInfo>;
  /** Defaulted policies (policyTypes filled, protocols TCP). */
  readonly policies: readonly NetworkPolicy[];
  /** Node name → its IPs. */
  readonly nodeIPs: ReadonlyMap<string, readonly string[]>;
}

export const podKey = (p: { namespace: string; name: string }): string =>
  `${p.namespace}/${p.name}`;

export const policyKey = (np: NetworkPolicy): string =>
  `${np.metadata.namespace ?? 'default'}/${np.metadata.name ?? ''}`;

/** Reduces a Pod object (its IPs from status.podIPs/podIP). */
export function podInfoOf(pod: Pod): PodInfo {
  const ips = (pod.status?.podIPs ?? []).map((x) => x.ip).filter((x): x is string => !!x);
  if (ips.length === 0 && pod.status?.podIP) ips.push(pod.status.podIP);
  const ports: NamedPort[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (p.name) {
        ports.push({ name: p.name, port: p.containerPort,
          protocol: (p.protocol ?? 'TCP') as NetpolProtocol });
      }
    }
  }
  return { namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name ?? '',
    labels: pod.metadata.labels ?? {}, ips, node: pod.spec?.nodeName, ports };
}

/**
 * Namespace labels as the API server stores them: `kubernetes.io/metadata.name` is always set
 * to the name (GA 1.22), whatever the object says.
 */
export function namespaceInfoOf(ns: Namespace): NamespaceInfo {
  const name = ns.metadata.name ?? '';
  return { name, labels: { ...(ns.metadata.labels ?? {}), 'kubernetes.io/metadata.name': name } };
}

export interface ModelInput {
  readonly pods: readonly Pod[];
  readonly namespaces: readonly Namespace[];
  readonly policies: readonly NetworkPolicy[];
  readonly nodeIPs?: ReadonlyMap<string, readonly string[]>;
}

// A controller rebuilds the model on every change from the same (immutable) informer objects:
// each object's reduced form is made once, keyed by the object itself. Callers must not mutate
// an object after passing it in (informer caches replace objects; they never edit them).
const podInfos = new WeakMap<Pod, PodInfo>();
const defaulted = new WeakMap<NetworkPolicy, NetworkPolicy>();

function podInfoCached(p: Pod): PodInfo {
  let i = podInfos.get(p);
  if (!i) podInfos.set(p, (i = podInfoOf(p)));
  return i;
}

function defaultedCached(np: NetworkPolicy): NetworkPolicy {
  let d = defaulted.get(np);
  if (!d) defaulted.set(np, (d = applyDefaults(structuredClone(np))));
  return d;
}

/** Builds the model; pods that are finished or not yet scheduled with an IP are still listed. */
export function buildModel(input: ModelInput): NetpolModel {
  const namespaces = new Map<string, NamespaceInfo>();
  for (const ns of input.namespaces) namespaces.set(ns.metadata.name ?? '', namespaceInfoOf(ns));
  const pods = input.pods.map(podInfoCached);
  for (const p of pods) {
    if (!namespaces.has(p.namespace)) {
      namespaces.set(p.namespace, namespaceInfoOf({ metadata: { name: p.namespace } } as never));
    }
  }
  const policies = input.policies.map(defaultedCached);
  return { pods, namespaces, policies, nodeIPs: input.nodeIPs ?? new Map() };
}
