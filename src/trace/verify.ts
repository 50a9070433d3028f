// `kdp verify`: the Kubernetes network model, checked by tracing. Pod-to-pod reachability is
// computed by equivalence classes: kube-proxy's tables can only tell pods apart by source IP,
// destination IP or node, so every pod is traced once as a sender to one pod on each node and
// once as a receiver from one pod on each node — 2·pods·nodes traces stand for pods² pairs.

import { cidrContains, type IPFamily } from '../api/net.js';
import type { EndpointSlice, Service } from '../api/types.js';
import type { ClusterTrace } from './cluster.js';
import { traceResolved } from './cluster.js';
import { endpointString, familyOf } from './packet.js';
import type { Topology, TracePodInfo } from './topology.js';

export interface VerifyFailure {
  readonly what: string;
  readonly expected: string;
  readonly got: string;
  readonly trace?: ClusterTrace;
}

export interface VerifyCheck {
  readonly name: string;
  /** Cases checked (for pod pairs: pairs covered). */
  cases: number;
  readonly failures: VerifyFailure[];
  skipped?: string;
}

export interface VerifyInput {
  readonly topo: Topology;
  readonly services: readonly Service[];
  readonly slices: readonly EndpointSlice[];
  /** An address outside the cluster for NodePort checks. */
  readonly outsideClient?: string;
}

const OUTSIDE = '203.0.113.10';
/** The IPv6 outside client (documentation range) for NodePorts of IPv6 nodes. */
const OUTSIDE6 = '2001:db8::10';

/** A bulk probe: traced without hops; `explain` traces it again with hops for a failure. */
interface Probe extends ClusterTrace {
  explain(): ClusterTrace;
}

function fastTrace(...[topo, src, dst, proto]: Parameters<typeof traceResolved>): Probe {
  return {
    ...traceResolved(topo, src, dst, proto, undefined, false),
    explain: () => traceResolved(topo, src, dst, proto),
  };
}

function explained(t: Probe): ClusterTrace {
  return t.explain();
}

export function verifyCluster(input: VerifyInput): VerifyCheck[] {
  return [
    checkUniqueIPs(input.topo),
    checkPodCIDRs(input.topo),
    checkPodToPod(input.topo),
    checkClusterIPs(input),
    checkNodePorts(input),
  ];
}

function check(name: string): VerifyCheck {
  return { name, cases: 0, failures: [] };
}

function checkUniqueIPs(topo: Topology): VerifyCheck {
  const c = check('pod IPs are unique');
  const byIP = new Map<string, string[]>();
  for (const p of topo.pods) byIP.set(p.ip, [...(byIP.get(p.ip) ?? []), p.name]);
  for (const [ip, names] of byIP) {
    c.cases++;
    if (names.length > 1) c.failures.push({ what: ip, expected: 'one pod', got: names.join(', ') });
  }
  return c;
}

function checkPodCIDRs(topo: Topology): VerifyCheck {
  const c = check('pod IPs are inside their node\'s podCIDR');
  for (const p of topo.pods) {
    c.cases++;
    const node = topo.nodes.find((n) => n.name === p.node);
    if (!node?.podCIDRs.some((cidr) => cidr.includes(':') === p.ip.includes(':') && cidrContains(cidr, p.ip))) {
      c.failures.push({ what: p.name, expected: `inside ${node?.podCIDRs.join(',') ?? '?'}`, got: p.ip });
    }
  }
  return c;
}

export function podSource(p: TracePodInfo) {
  return { ip: p.ip, entry: { kind: 'pod' as const, pod: p.name, node: p.node }, label: `pod ${p.name}` };
}

function checkPodToPod(topo: Topology): VerifyCheck {
  const c = check('every pod reaches every pod with its own IP (no NAT)');
  // One receiver and sender per node and family (a dual-stack pod is listed once per IP; pods
  // reach each other within a family).
  const reps = new Map<string, TracePodInfo>();
  for (const p of topo.pods) {
    const key = `${p.node}/${familyOf(p.ip)}`;
    if (!reps.has(key)) reps.set(key, p);
  }
  const probe = (from: TracePodInfo, to: TracePodInfo) => {
    if (from.ip === to.ip || familyOf(from.ip) !== familyOf(to.ip)) return;
    // A port the receiver listens on (a refused port says nothing about the network).
    const port = Number(to.listeners?.find((l) => l.endsWith('/TCP'))?.split('/')[0] ?? 8080);
    const t = fastTrace(topo, podSource(from), { ip: to.ip, port, label: `pod ${to.name}`, pod: to.name }, 'tcp');
    if (!t.natFree) {
      const d = t.result.destinations[0];
      c.failures.push({
        what: `${from.name} → ${to.name}`, expected: `${endpointString(to.ip, port)} seen from ${from.ip}`,
        got: d ? `${d.verdict} ${d.destination} seen from ${d.sourceSeen}` : t.result.verdict, trace: explained(t),
      });
    }
  };
  for (const p of topo.pods) {
    for (const r of reps.values()) {
      probe(p, r);
      probe(r, p);
    }
  }
  const v6 = topo.pods.filter((p) => familyOf(p.ip) === 'IPv6').length;
  const v4 = topo.pods.length - v6;
  c.cases = v4 * Math.max(0, v4 - 1) + v6 * Math.max(0, v6 - 1);
  return c;
}

interface PortEndpoints {
  readonly all: string[];
  readonly byNode: Map<string, string[]>;
  readonly hinted: boolean;
}

function endpointsOf(svc: Service, portName: string, slices: readonly EndpointSlice[],
  family: IPFamily): PortEndpoints {
  const all: string[] = [];
  const byNode = new Map<string, string[]>();
  let hinted = false;
  for (const s of slices) {
    if (s.metadata.namespace !== svc.metadata.namespace ||
      s.metadata.labels?.['kubernetes.io/service-name'] !== svc.metadata.name) continue;
    if (s.addressType !== family) continue;
    const port = (s.ports ?? []).find((p) => (p.name ?? '') === portName);
    if (!port?.port) continue;
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      if (e.hints) hinted = true;
      for (const a of e.addresses.slice(0, 1)) {
        const ep = endpointString(a, port.port);
        all.push(ep);
        if (e.nodeName) byNode.set(e.nodeName, [...(byNode.get(e.nodeName) ?? []), ep]);
      }
    }
  }
  return { all: [...new Set(all)].sort(), byNode, hinted };
}

function compare(c: VerifyCheck, what: string, t: Probe, expected: readonly string[], keepSource?: string): void {
  c.cases++;
  const got = t.result.destinations.filter((d) => d.verdict === 'ACCEPT').map((d) => d.destination).sort();
  const exp = [...expected].sort();
  if (exp.length === 0) {
    if (t.result.verdict === 'ACCEPT') c.failures.push({ what, expected: 'refused (no endpoints)', got: got.join(', '), trace: explained(t) });
    return;
  }
  if (got.join(',') !== exp.join(',')) {
    c.failures.push({ what, expected: exp.join(', '), got: got.join(', ') || t.result.verdict, trace: explained(t) });
  } else if (keepSource && t.result.destinations.some((d) => d.sourceSeen !== keepSource)) {
    c.failures.push({ what, expected: `client IP ${keepSource} kept`, got: 'masqueraded', trace: explained(t) });
  }
}

function checkClusterIPs(input: VerifyInput): VerifyCheck {
  const c = check('every ClusterIP reaches exactly its ready endpoints, from every node and pod');
  const { topo } = input;
  for (const svc of input.services) {
    const primary = svc.spec?.clusterIP;
    if (!primary || primary === 'None' || svc.spec?.type === 'ExternalName') continue;
    for (const ip of svc.spec?.clusterIPs?.length ? svc.spec.clusterIPs : [primary]) {
      checkClusterIP(c, input, svc, ip);
    }
  }
  return c;
}

/** One ClusterIP (a dual-stack Service has one per family) from every node and a pod of each. */
function checkClusterIP(c: VerifyCheck, input: VerifyInput, svc: Service, ip: string): void {
  const { topo } = input;
  const family = familyOf(ip);
  for (const port of svc.spec?.ports ?? []) {
    const eps = endpointsOf(svc, port.name ?? '', input.slices, family);
    if (eps.hinted) continue;
    const proto = (port.protocol ?? 'TCP').toLowerCase() as 'tcp' | 'udp' | 'sctp';
    const dst = { ip, port: port.port, label: `service ${svc.metadata.namespace}/${svc.metadata.name}:${port.name || port.port}` };
    for (const node of topo.nodes) {
      const local = svc.spec?.internalTrafficPolicy === 'Local';
      const expected = local ? (eps.byNode.get(node.name) ?? []) : eps.all;
      const pod = topo.pods.find((p) => p.node === node.name && familyOf(p.ip) === family &&
        !eps.all.some((e) => e.startsWith(`${p.ip}:`) || e.startsWith(`[${p.ip}]:`)));
      const nodeIP = node.nodeIPs.find((x) => familyOf(x) === family);
      const sources = [
        ...(nodeIP ? [{ ip: nodeIP, entry: { kind: 'node' as const, node: node.name }, label: `node ${node.name}` }] : []),
        ...(pod ? [podSource(pod)] : []),
      ];
      for (const src of sources) {
        compare(c, `${src.label} → ${dst.label}`, fastTrace(topo, src, dst, proto), expected);
      }
    }
  }
}

function checkNodePorts(input: VerifyInput): VerifyCheck {
  const c = check('NodePorts on every node (eTP Local keeps the client IP, drops without a local endpoint)');
  const { topo } = input;
  for (const svc of input.services) {
    for (const port of svc.spec?.ports ?? []) {
      if (!port.nodePort) continue;
      const local = svc.spec?.externalTrafficPolicy === 'Local';
      const proto = (port.protocol ?? 'TCP').toLowerCase() as 'tcp' | 'udp' | 'sctp';
      // The node's first IP of a family the Service has, from an outside client of that
      // family, to the endpoints of that family (looked up once per family, not per node).
      const fams = (svc.spec?.clusterIPs ?? [svc.spec?.clusterIP ?? '']).filter(Boolean)
        .map(familyOf);
      const epsOf = new Map<IPFamily, PortEndpoints>();
      for (const node of topo.nodes) {
        const nodeIP = node.nodeIPs.find((x) => !fams.length || fams.includes(familyOf(x)));
        if (!nodeIP) continue;
        const dst = { ip: nodeIP, port: port.nodePort, label: `${node.name}:${port.nodePort}`, node: node.name };
        const family = familyOf(dst.ip);
        let eps = epsOf.get(family);
        if (!eps) epsOf.set(family, eps = endpointsOf(svc, port.name ?? '', input.slices, family));
        if (eps.hinted) continue;
        const client = input.outsideClient !== undefined && familyOf(input.outsideClient) === family
          ? input.outsideClient : family === 'IPv6' ? OUTSIDE6 : OUTSIDE;
        const src = { ip: client, entry: { kind: 'external' as const, node: node.name }, label: `outside ${client}` };
        const t = fastTrace(topo, src, dst, proto);
        const expected = local ? (eps.byNode.get(node.name) ?? []) : eps.all;
        compare(c, `${src.label} → ${svc.metadata.namespace}/${svc.metadata.name} via ${dst.label}`, t, expected, local ? client : undefined);
      }
    }
  }
  return c;
}
