// The proxier's view of the cluster, as upstream's pkg/proxy builds it: Services become a map of
// service ports, EndpointSlices a map of endpoints per service port. Every backend (iptables,
// nftables, ipvs) compiles from exactly these structures, so they agree by construction on what
// the inputs mean and can differ only in how they express it.

export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type IPFamily = 'IPv4' | 'IPv6';

/** Upstream `ServicePortName`: namespace/name plus the port's name and protocol. */
export interface ServicePortName {
  readonly namespace: string;
  readonly name: string;
  /** The Service port's `name` ('' for an unnamed single port). */
  readonly port: string;
  readonly protocol: Protocol;
}

/** `ns/name:port` (or `ns/name` when the port is unnamed), as upstream's String(). */
export function servicePortNameString(n: ServicePortName): string {
  const base = `${n.namespace}/${n.name}`;
  return n.port === '' ? base : `${base}:${n.port}`;
}

/** Upstream `BaseServicePortInfo`, for one IP family. Addresses are canonical strings. */
export interface ServicePortInfo {
  readonly name: ServicePortName;
  readonly clusterIP: string;
  readonly port: number;
  readonly protocol: Protocol;
  /** 0 when the service has no node port for this port. */
  readonly nodePort: number;
  /** `status.loadBalancer.ingress[].ip` of this family (after filtering, in order). */
  readonly loadBalancerVIPs: readonly string[];
  readonly sessionAffinityClientIP: boolean;
  /** ClientIP affinity timeout in seconds (default 10800). */
  readonly stickyMaxAgeSeconds: number;
  readonly externalIPs: readonly string[];
  /** CIDRs of this family, canonical (`1.2.3.0/24`). Empty = allow all. */
  readonly loadBalancerSourceRanges: readonly string[];
  /** 0 when unset. */
  readonly healthCheckNodePort: number;
  /** externalTrafficPolicy: Local (only meaningful for NodePort/LB/externalIPs). */
  readonly externalPolicyLocal: boolean;
  /** internalTrafficPolicy: Local. */
  readonly internalPolicyLocal: boolean;
  /** Upstream `UsesClusterEndpoints`/`UsesLocalEndpoints` are derived from the two above. */
  readonly hintsAnnotation: string;
  /** Service has `spec.trafficDistribution` set (enables topology use like hints). */
  readonly trafficDistribution?: string;
}

/** Upstream `BaseEndpointInfo`. */
export interface EndpointInfo {
  /** Pod IP (canonical). */
  readonly ip: string;
  readonly port: number;
  /** `ip:port`, IPv6 as `[ip]:port`. */
  readonly endpoint: string;
  /** The endpoint's nodeName equals this proxier's node. */
  readonly isLocal: boolean;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  /** hints.forZones names; undefined when the slice has no hints for this endpoint. */
  readonly zoneHints?: ReadonlySet<string>;
  /** hints.forNodes names (trafficDistribution PreferSameNode, 1.33). */
  readonly nodeHints?: ReadonlySet<string>;
  readonly nodeName?: string;
  readonly zone?: string;
}

/** Keyed by `servicePortNameString(...)` + protocol. See `servicePortKey`. */
export type ServicePortMap = ReadonlyMap<string, ServicePortInfo>;
export type EndpointsMap = ReadonlyMap<string, readonly EndpointInfo[]>;

/** Map key for a service port: `ns/name:port/PROTO` (unique per service port). */
export function servicePortKey(n: ServicePortName): string {
  return `${servicePortNameString(n)}/${n.protocol}`;
}
