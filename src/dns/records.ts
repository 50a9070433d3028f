// The record snapshot the cluster DNS answers from: Services, the ready endpoints of their
// EndpointSlices, Namespaces and (only for `pods verified`) Pod IPs, reduced to what names need
// and indexed for lookups. `buildDnsIndex` is pure: the same objects give the same index, so
// the server, `kdp dns lookup` and later `kdp trace`/`kdp verify` share one source of truth.

import type { EndpointSlice } from '../api/types/discovery.js';
import type { Pod } from '../api/types/pod.js';
import type { Service } from '../api/types/service.js';
import type { KubeObject } from '../client/types.js';
import { canonicalIP } from '../api/net.js';
import { dashedIP } from './names.js';

export interface DnsPort {
  /** '' for an unnamed port (no SRV record by name, as the spec says). */
  readonly name: string;
  /** Lower case: `tcp`, `udp`, `sctp`. */
  readonly protocol: string;
  /** -1 for a slice without ports (CoreDNS's sentinel: A records, no SRV). */
  readonly port: number;
}

export interface DnsService {
  readonly namespace: string;
  readonly name: string;
  readonly headless: boolean;
  /** Set for `type: ExternalName` (normalised, no trailing dot). */
  readonly externalName?: string;
  /** ClusterIPs, then externalIPs are only used for PTR. */
  readonly clusterIPs: readonly string[];
  readonly externalIPs: readonly string[];
  readonly ports: readonly DnsPort[];
}

/** One ready address of a Service's EndpointSlices. */
export interface DnsEndpoint {
  readonly ip: string;
  /** The endpoint's `hostname`, else the dashed IP (CoreDNS's endpoint naming). */
  readonly label: string;
  readonly ports: readonly DnsPort[];
}

/** What a lookup reads. Keys of maps are `namespace/name`; names are lower case. */
export interface DnsIndex {
  readonly services: ReadonlyMap<string, DnsService>;
  readonly endpoints: ReadonlyMap<string, readonly DnsEndpoint[]>;
  readonly namespaces: ReadonlySet<string>;
  /** IP → namespaces of pods with that IP (filled only for `pods verified`). */
  readonly podIPs: ReadonlyMap<string, ReadonlySet<string>>;
  /** IP → the names a PTR answers: a Service's name first (only one), else every endpoint name. */
  readonly ptr: ReadonlyMap<string, readonly string[]>;
  /** Whether every watched kind has been listed once (CoreDNS answers SERVFAIL before that). */
  readonly synced: boolean;
  /** SOA serial: seconds since the epoch of the last change (CoreDNS's `Modified`). */
  readonly serial: number;
}

export interface DnsObjects {
  readonly services: readonly Service[];
  readonly endpointSlices: readonly EndpointSlice[];
  readonly namespaces: readonly KubeObject[];
  readonly pods?: readonly Pod[];
}

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export function key(namespace: string, name: string): string {
  return `${namespace}/${name}`.toLowerCase();
}

function lowerProto(p: string | undefined): string {
  return (p ?? 'TCP').toLowerCase();
}

/** Reduces a Service to what names need; undefined for one without a name. */
export function toDnsService(s: Service): DnsService | undefined {
  const { name, namespace = 'default' } = s.metadata;
  if (!name) return undefined;
  const spec = s.spec ?? {};
  const ips = (spec.clusterIPs?.length ? spec.clusterIPs : [spec.clusterIP ?? ''])
    .map((ip) => canonicalIP(ip)).filter((ip): ip is string => !!ip);
  const ext = spec.type === 'ExternalName' && spec.externalName
    ? spec.externalName.toLowerCase().replace(/\.$/, '') : undefined;
  return {
    namespace: namespace.toLowerCase(), name: name.toLowerCase(),
    headless: spec.clusterIP === 'None', externalName: ext, clusterIPs: ips,
    externalIPs: (spec.externalIPs ?? []).map((ip) => canonicalIP(ip))
      .filter((ip): ip is string => !!ip),
    ports: (spec.ports ?? []).map((p) => ({ name: (p.name ?? '').toLowerCase(),
      protocol: lowerProto(p.protocol), port: p.port })),
  };
}

/** The Service a slice belongs to (`kubernetes.io/service-name`), as a key. */
export function sliceServiceKey(slice: EndpointSlice): string | undefined {
  const svc = slice.metadata.labels?.[SERVICE_NAME_LABEL];
  return svc ? key(slice.metadata.namespace ?? 'default', svc) : undefined;
}

/**
 * The ready endpoints of one slice (CoreDNS: `ready` unset counts as ready; the endpointslice
 * controller already marks not-ready pods ready when `publishNotReadyAddresses` is set).
 * FQDN slices are skipped, as CoreDNS does.
 */
export function sliceEndpoints(slice: EndpointSlice): DnsEndpoint[] {
  if (slice.addressType === 'FQDN') return [];
  const ports: DnsPort[] = (slice.ports ?? []).map((p) => ({ name: (p.name ?? '').toLowerCase(),
    protocol: lowerProto(p.protocol), port: p.port ?? -1 }));
  const withSentinel = ports.length ? ports : [{ name: '', protocol: '', port: -1 }];
  const out: DnsEndpoint[] = [];
  for (const ep of slice.endpoints ?? []) {
    if (ep.conditions?.ready === false) continue;
    for (const raw of ep.addresses ?? []) {
      const ip = canonicalIP(raw);
      if (!ip) continue;
      out.push({ ip, label: (ep.hostname || dashedIP(ip)).toLowerCase(), ports: withSentinel });
    }
  }
  return out;
}

/** Mutable inputs of an index, as a live source keeps them (already reduced per object). */
export interface DnsParts {
  readonly services: Iterable<DnsService>;
  /** Per slice: the service key and its ready endpoints. */
  readonly slices: Iterable<{ serviceKey: string; endpoints: readonly DnsEndpoint[] }>;
  readonly namespaces: Iterable<string>;
  readonly pods: Iterable<{ namespace: string; ips: readonly string[] }>;
  readonly synced: boolean;
  readonly serial: number;
}

export function indexParts(parts: DnsParts, zone: string): DnsIndex {
  const services = new Map<string, DnsService>();
  for (const s of parts.services) services.set(key(s.namespace, s.name), s);
  const endpoints = new Map<string, DnsEndpoint[]>();
  for (const sl of parts.slices) {
    if (!sl.endpoints.length) continue;
    const list = endpoints.get(sl.serviceKey) ?? [];
    list.push(...sl.endpoints);
    endpoints.set(sl.serviceKey, list);
  }
  const podIPs = new Map<string, Set<string>>();
  for (const p of parts.pods) {
    for (const ip of p.ips) {
      const set = podIPs.get(ip) ?? new Set<string>();
      set.add(p.namespace.toLowerCase());
      podIPs.set(ip, set);
    }
  }
  const ptr = new Map<string, string[]>();
  for (const s of services.values()) {
    for (const ip of [...s.clusterIPs, ...s.externalIPs]) {
      if (!ptr.has(ip)) ptr.set(ip, [`${s.name}.${s.namespace}.svc.${zone}`]);
    }
  }
  const fromService = new Set(ptr.keys());
  for (const [svcKey, eps] of endpoints) {
    const [ns, name] = svcKey.split('/') as [string, string];
    for (const ep of eps) {
      if (fromService.has(ep.ip)) continue;
      const names = ptr.get(ep.ip) ?? [];
      const fqdn = `${ep.label}.${name}.${ns}.svc.${zone}`;
      if (!names.includes(fqdn)) names.push(fqdn);
      ptr.set(ep.ip, names);
    }
  }
  const namespaces = new Set([...parts.namespaces].map((n) => n.toLowerCase()));
  return { services, endpoints, namespaces,
    podIPs, ptr, synced: parts.synced, serial: parts.serial };
}

/** The index of a set of objects (a snapshot: synced, serial 0 unless given). */
export function buildDnsIndex(objects: DnsObjects, zone = 'cluster.local', serial = 0): DnsIndex {
  const services = objects.services.map(toDnsService).filter((s): s is DnsService => !!s);
  const slices = objects.endpointSlices.map((sl) => ({ serviceKey: sliceServiceKey(sl) ?? '',
    endpoints: sliceEndpoints(sl) })).filter((s) => s.serviceKey);
  const namespaces = objects.namespaces.map((n) => n.metadata.name ?? '').filter(Boolean);
  const pods = (objects.pods ?? []).map((p) => ({ namespace: p.metadata.namespace ?? 'default',
    ips: podIPsOf(p) }));
  return indexParts({ services, slices, namespaces, pods, synced: true, serial }, zone);
}

/** A pod's IPs (status.podIPs, else status.podIP), canonical. */
export function podIPsOf(p: Pod): string[] {
  const st = p.status ?? {};
  const raw = st.podIPs?.length ? st.podIPs.map((x) => x.ip) : st.podIP ? [st.podIP] : [];
  return raw.map((ip) => canonicalIP(ip)).filter((ip): ip is string => !!ip);
}
