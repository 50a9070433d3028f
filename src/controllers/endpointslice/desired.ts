// What a Service's EndpointSlices should contain: one endpoint per serving-eligible pod, grouped
// by the ports the pod resolves the Service's target ports to (upstream podToEndpoint,
// FindPort, ShouldPodBeInEndpoints).

import type {
  Endpoint, EndpointSlicePort, Node, Pod, Service, ServicePort,
} from '../../api/types.js';
import { isIPv6 } from '../../api/net.js';
import { isPodReady } from '../util.js';

export interface EndpointGroup {
  readonly ports: EndpointSlicePort[];
  /** keyed by address */
  readonly endpoints: Map<string, Endpoint>;
}

/** Resolves a Service port against a pod (upstream podutil.FindPort); undefined if it cannot. */
export function findPort(pod: Pod, sp: ServicePort): number | undefined {
  const tp = sp.targetPort ?? sp.port;
  if (typeof tp === 'number') return tp;
  if (/^\d+$/.test(tp)) return Number(tp);
  const proto = sp.protocol ?? 'TCP';
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (p.name === tp && (p.protocol ?? 'TCP') === proto) return p.containerPort;
    }
  }
  return undefined;
}

export function shouldPodBeInEndpoints(pod: Pod, includeTerminating: boolean): boolean {
  if (!pod.status?.podIP && !(pod.status?.podIPs ?? []).length) return false;
  if (!includeTerminating && pod.metadata.deletionTimestamp) return false;
  const phase = pod.status?.phase;
  switch (pod.spec?.restartPolicy ?? 'Always') {
    case 'Never': return phase !== 'Failed' && phase !== 'Succeeded';
    case 'OnFailure': return phase !== 'Succeeded';
    default: return true;
  }
}

export function podIPOfFamily(pod: Pod, family: 'IPv4' | 'IPv6'): string | undefined {
  const ips = (pod.status?.podIPs ?? []).map((p) => p.ip);
  if (ips.length === 0 && pod.status?.podIP) ips.push(pod.status.podIP);
  return ips.find((ip) => isIPv6(ip) === (family === 'IPv6'));
}

export function podEndpoint(
  pod: Pod, svc: Service, address: string, node: Node | undefined,
): Endpoint {
  const terminating = !!pod.metadata.deletionTimestamp;
  const serving = isPodReady(pod);
  const publish = !!svc.spec?.publishNotReadyAddresses;
  const ep: Endpoint = {
    addresses: [address],
    conditions: { ready: publish || (serving && !terminating), serving, terminating },
  };
  if (pod.spec?.hostname && pod.spec.subdomain === svc.metadata.name
    && pod.metadata.namespace === svc.metadata.namespace) {
    ep.hostname = pod.spec.hostname;
  }
  ep.targetRef = {
    kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid,
  };
  if (pod.spec?.nodeName) ep.nodeName = pod.spec.nodeName;
  const zone = node?.metadata.labels?.['topology.kubernetes.io/zone'];
  if (zone) ep.zone = zone;
  return ep;
}

export function podPorts(pod: Pod, svc: Service): EndpointSlicePort[] {
  const out: EndpointSlicePort[] = [];
  for (const sp of svc.spec?.ports ?? []) {
    const port = findPort(pod, sp);
    if (port === undefined) continue;
    const p: EndpointSlicePort = { name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP' };
    if (sp.appProtocol) p.appProtocol = sp.appProtocol;
    out.push(p);
  }
  return out;
}

export const portsKey = (ports: readonly EndpointSlicePort[] | undefined): string =>
  JSON.stringify([...(ports ?? [])].map((p) => [p.name ?? '', p.protocol ?? 'TCP', p.port ?? 0,
    p.appProtocol ?? '']).sort());

export function desiredGroups(
  svc: Service, pods: readonly Pod[], family: 'IPv4' | 'IPv6',
  nodeOf: (name: string) => Node | undefined,
): Map<string, EndpointGroup> {
  const groups = new Map<string, EndpointGroup>();
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, true)) continue;
    const ip = podIPOfFamily(pod, family);
    if (!ip) continue;
    const ports = podPorts(pod, svc);
    const key = portsKey(ports);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ports, endpoints: new Map() }));
    const node = pod.spec?.nodeName ? nodeOf(pod.spec.nodeName) : undefined;
    g.endpoints.set(ip, podEndpoint(pod, svc, ip, node));
  }
  return groups;
}
