// NetworkPolicy semantics (networking.k8s.io/v1, as the API documents them): is a connection
// allowed, and why. Ingress and egress isolation are independent; a pod is isolated in a
// direction iff some policy in its namespace selects it and lists that policy type; an isolated
// pod accepts only what the union of the selecting policies' rules allows. A pod-to-pod
// connection needs both the source's egress and the destination's ingress. Traffic from the
// destination pod's own node is always allowed. Replies are conntrack's business, not this.

import { labelSelectorMatcher } from '../api/selectors.js';
import type { LabelMatcher } from '../api/selectors.js';
import type { LabelSelector } from '../api/types.js';
import { cidrContains, parseCIDR, parseIP } from '../api/net.js';
import type {
  IPBlock, NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort, NetpolProtocol, PolicyType,
} from './types.js';
import type { NetpolModel, PodInfo } from './model.js';
import { podKey, policyKey } from './model.js';

/** The source: a pod of the model, or a bare IP (outside the cluster, a node, ...). */
export type Endpoint = { readonly pod: PodInfo } | { readonly ip: string };

export interface Connection {
  readonly from: Endpoint;
  readonly to: PodInfo;
  readonly port: number;
  readonly protocol: NetpolProtocol;
}

export interface RuleRef {
  readonly policy: string;
  readonly type: PolicyType;
  readonly rule: number;
}

/** One direction's answer. `isolatedBy` empty = not isolated (allowed, no policy). */
export interface DirectionVerdict {
  readonly allowed: boolean;
  readonly isolatedBy: readonly string[];
  readonly allowedBy?: RuleRef;
  /** Set when allowed for a reason other than a rule (from the pod's own node). */
  readonly note?: string;
}

export interface Verdict {
  readonly allowed: boolean;
  /** Absent when the source is not a pod (no egress policy applies to it). */
  readonly egress?: DirectionVerdict;
  readonly ingress: DirectionVerdict;
  readonly reason: string;
}

// Caches: models and policies are treated as immutable once built (buildModel clones), so
// selector matchers, per-pod isolation and per-peer pod sets are computed once per object.
const matchers = new WeakMap<LabelSelector, LabelMatcher>();
function matchesLabelSelector(s: LabelSelector | undefined,
  labels: Readonly<Record<string, string>>): boolean {
  if (!s) return labelSelectorMatcher(s).matches(labels);
  let m = matchers.get(s);
  if (!m) { m = labelSelectorMatcher(s); matchers.set(s, m); }
  return m.matches(labels);
}

interface ModelIndex {
  readonly pods: ReadonlySet<PodInfo>;
  readonly isolating: Map<PodInfo, Partial<Record<PolicyType, NetworkPolicy[]>>>;
  readonly peerPods: WeakMap<NetworkPolicyPeer, Set<PodInfo>>;
}
const indexes = new WeakMap<NetpolModel, ModelIndex>();
function indexOf(m: NetpolModel): ModelIndex {
  let ix = indexes.get(m);
  if (!ix) {
    ix = { pods: new Set(m.pods), isolating: new Map(), peerPods: new WeakMap() };
    indexes.set(m, ix);
  }
  return ix;
}

/** Whether `pod` is selected by `np` (same namespace, podSelector matches). */
export function selects(np: NetworkPolicy, pod: PodInfo): boolean {
  return (np.metadata.namespace ?? 'default') === pod.namespace
    && matchesLabelSelector(np.spec.podSelector, pod.labels);
}

const hasType = (np: NetworkPolicy, t: PolicyType): boolean =>
  (np.spec.policyTypes ?? []).includes(t);

/** Policies isolating `pod` for direction `t`, in input order. */
export function isolating(m: NetpolModel, pod: PodInfo, t: PolicyType): NetworkPolicy[] {
  const ix = indexOf(m);
  if (!ix.pods.has(pod)) return m.policies.filter((np) => hasType(np, t) && selects(np, pod));
  let e = ix.isolating.get(pod);
  if (!e) { e = {}; ix.isolating.set(pod, e); }
  return (e[t] ??= m.policies.filter((np) => hasType(np, t) && selects(np, pod)));
}

export function ipBlockMatches(b: IPBlock, ip: string): boolean {
  const a = parseIP(ip);
  const c = parseCIDR(b.cidr);
  if (!a || !c || a.family !== c.family || !cidrContains(c, a)) return false;
  return !(b.except ?? []).some((e) => {
    const x = parseCIDR(e);
    return x !== null && x.family === a.family && cidrContains(x, a);
  });
}

/** Whether `peer` (of a policy in namespace `policyNs`) matches the endpoint `e`. */
export function peerMatches(m: NetpolModel, peer: NetworkPolicyPeer, policyNs: string,
  e: Endpoint): boolean {
  if (peer.ipBlock) {
    const ips = 'pod' in e ? e.pod.ips : [e.ip];
    return ips.some((ip) => ipBlockMatches(peer.ipBlock!, ip));
  }
  if (!('pod' in e)) return false;
  const ix = indexOf(m);
  if (ix.pods.has(e.pod)) {
    let set = ix.peerPods.get(peer);
    if (!set) {
      set = new Set(m.pods.filter((p) => podPeerMatches(m, peer, policyNs, p)));
      ix.peerPods.set(peer, set);
    }
    return set.has(e.pod);
  }
  return podPeerMatches(m, peer, policyNs, e.pod);
}

/** A selector peer (not ipBlock) matching a pod, evaluated afresh (no per-model cache). */
export function podPeerMatches(m: NetpolModel, peer: NetworkPolicyPeer, policyNs: string,
  pod: PodInfo): boolean {
  if (peer.namespaceSelector) {
    const ns = m.namespaces.get(pod.namespace);
    if (!matchesLabelSelector(peer.namespaceSelector, ns?.labels ?? {})) return false;
  } else if (pod.namespace !== policyNs) return false;
  return !peer.podSelector || matchesLabelSelector(peer.podSelector, pod.labels);
}

/** Whether a rule's port entry admits (port, protocol) to `dst` (named ports: dst's ports). */
export function portMatches(p: NetworkPolicyPort, dst: PodInfo, port: number,
  protocol: NetpolProtocol): boolean {
  if ((p.protocol ?? 'TCP') !== protocol) return false;
  if (p.port === undefined) return true;
  if (typeof p.port === 'number') return port >= p.port && port <= (p.endPort ?? p.port);
  return dst.ports.some((n) => n.name === p.port && n.port === port && n.protocol === protocol);
}

function portsMatch(ports: NetworkPolicyPort[] | undefined, c: Connection): boolean {
  return !ports || ports.length === 0
    || ports.some((p) => portMatches(p, c.to, c.port, c.protocol));
}

function peersMatch(m: NetpolModel, peers: NetworkPolicyPeer[] | undefined, ns: string,
  e: Endpoint): boolean {
  return !peers || peers.length === 0 || peers.some((p) => peerMatches(m, p, ns, e));
}

function direction(m: NetpolModel, c: Connection, t: PolicyType): DirectionVerdict {
  const subject = t === 'Ingress' ? c.to : (c.from as { pod: PodInfo }).pod;
  const pols = isolating(m, subject, t);
  const isolatedBy = pols.map(policyKey);
  if (pols.length === 0) return { allowed: true, isolatedBy };
  for (const np of pols) {
    const ns = np.metadata.namespace ?? 'default';
    const rules = t === 'Ingress' ? np.spec.ingress ?? [] : np.spec.egress ?? [];
    for (let i = 0; i < rules.length; i++) {
      const r = rules[i]!;
      const peers = t === 'Ingress' ? (r as { from?: NetworkPolicyPeer[] }).from
        : (r as { to?: NetworkPolicyPeer[] }).to;
      const other: Endpoint = t === 'Ingress' ? c.from : { pod: c.to };
      if (portsMatch(r.ports, c) && peersMatch(m, peers, ns, other)) {
        return { allowed: true, isolatedBy, allowedBy: { policy: policyKey(np), type: t, rule: i } };
      }
    }
  }
  return { allowed: false, isolatedBy };
}

/** `direction(...).allowed` without building the explanation (the matrix's hot path). */
function directionAllows(m: NetpolModel, c: Connection, t: PolicyType): boolean {
  const subject = t === 'Ingress' ? c.to : (c.from as { pod: PodInfo }).pod;
  const pols = isolating(m, subject, t);
  if (pols.length === 0) return true;
  const other: Endpoint = t === 'Ingress' ? c.from : { pod: c.to };
  for (const np of pols) {
    const ns = np.metadata.namespace ?? 'default';
    if (t === 'Ingress') {
      for (const r of np.spec.ingress ?? []) {
        if (portsMatch(r.ports, c) && peersMatch(m, r.from, ns, other)) return true;
      }
    } else {
      for (const r of np.spec.egress ?? []) {
        if (portsMatch(r.ports, c) && peersMatch(m, r.to, ns, other)) return true;
      }
    }
  }
  return false;
}

/** Whether the connection is allowed; same answer as `evaluate(...).allowed`, no reason. */
export function isAllowed(m: NetpolModel, c: Connection): boolean {
  if ('pod' in c.from && !directionAllows(m, c, 'Egress')) return false;
  return fromNode(m, c) || directionAllows(m, c, 'Ingress');
}

function fromNode(m: NetpolModel, c: Connection): boolean {
  if ('pod' in c.from || !c.to.node) return false;
  return (m.nodeIPs.get(c.to.node) ?? []).includes(c.from.ip);
}

function describe(t: PolicyType, d: DirectionVerdict, subject: string): string {
  const dir = t.toLowerCase();
  if (d.note) return `${dir}: ${d.note}`;
  if (d.isolatedBy.length === 0) return `${dir}: no policy selects ${subject}`;
  if (d.allowedBy) {
    return `${dir}: allowed by ${d.allowedBy.policy} ${dir} rule ${d.allowedBy.rule}`;
  }
  return `${dir}: denied: ${subject} is isolated for ${dir} by ${d.isolatedBy.join(', ')} `
    + `and no ${dir} rule allows it`;
}

/** Evaluates one connection; `reason` names the policy + rule, or the isolation that denies. */
export function evaluate(m: NetpolModel, c: Connection): Verdict {
  const egress = 'pod' in c.from ? direction(m, c, 'Egress') : undefined;
  const ingress: DirectionVerdict = fromNode(m, c)
    ? { allowed: true, isolatedBy: [], note: "from the pod's own node: always allowed" }
    : direction(m, c, 'Ingress');
  const allowed = (egress?.allowed ?? true) && ingress.allowed;
  const parts: string[] = [];
  if (egress && 'pod' in c.from) parts.push(describe('Egress', egress, podKey(c.from.pod)));
  parts.push(describe('Ingress', ingress, podKey(c.to)));
  return { allowed, egress, ingress, reason: parts.join('; ') };
}
