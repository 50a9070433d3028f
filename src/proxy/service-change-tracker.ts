// Services → service ports, as upstream's ServiceChangeTracker / newBaseServiceInfo, for one IP
// family. Objects are read the way kube-proxy reads what the API server stored: addresses are
// parsed sloppily (leading zeros in IPv4 octets), source ranges are trimmed, and anything of the
// other family is dropped silently. Missing defaults (type, protocol, affinity timeout) are
// filled in as the API server would, so raw YAML compiles the same as stored objects.
// Every field a rule is built from is checked first (input-check.ts): a Service with a bad
// service-wide field gets no service ports, a bad port is left out, a bad entry of an address
// list is dropped, and each is reported to `opts.report`.

import { canonicalIPFast, familyOfIP, formatCIDR, parseCIDR } from '../api/net.js';
import type { Service, ServicePort } from '../api/types.js';
import {
  absent, bad, checkEnum, checkInt, checkList, checkObjectName, checkPortName, checkString,
  isInt, isObject, isPortName, isProtocol, shown, type InputProblem, type ProblemReporter,
} from './input-check.js';
import { servicePortKey } from './types.js';
import type { IPFamily, Protocol, ServicePortInfo, ServicePortMap } from './types.js';

const HINTS_ANNOTATION = 'service.kubernetes.io/topology-aware-hints';
const TOPOLOGY_MODE_ANNOTATION = 'service.kubernetes.io/topology-mode';
/** API default of sessionAffinityConfig.clientIP.timeoutSeconds. */
export const DEFAULT_STICKY_SECONDS = 10800;

export interface ServiceTrackerOptions {
  readonly family: IPFamily;
  /** LoadBalancerIPMode feature (GA): skip ingress entries with `ipMode: Proxy`. Default true. */
  readonly loadBalancerIPMode?: boolean;
  /** Told about every Service, port or list entry left out because a field is bad. */
  readonly report?: ProblemReporter;
}

/** `ns/name` of an object. */
export function namespacedName(o: { metadata?: { namespace?: string; name?: string } }): string {
  return `${o.metadata?.namespace ?? 'default'}/${o.metadata?.name ?? ''}`;
}

/** Upstream GetClusterIPByFamily: the ClusterIP of `family`, or '' when there is none. */
export function clusterIPOfFamily(svc: Service, family: IPFamily): string {
  const spec = svc.spec ?? {};
  const families = spec.ipFamilies ?? [];
  if (families.length === 0) {
    const ip = spec.clusterIP ?? '';
    if (ip === '' || ip === 'None') return '';
    return familyOfIP(ip) === family ? ip : '';
  }
  const idx = families.indexOf(family);
  return idx >= 0 ? (spec.clusterIPs?.[idx] ?? '') : '';
}

/** Upstream validation: 0 < timeoutSeconds <= 86400 (one day). */
export const MAX_STICKY_SECONDS = 86400;
const TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];
const AFFINITIES = ['None', 'ClientIP'];
const POLICIES = ['Cluster', 'Local'];
const FAMILIES = ['IPv4', 'IPv6'];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];

/** Reports one dropped port or entry of `svc` (the object is known to be named by now). */
type Drop = (skipped: InputProblem['skipped'], message: string) => void;

function dropper(svc: Service, report: ProblemReporter | undefined): Drop {
  if (!report) return () => undefined;
  const namespace = svc.metadata.namespace ?? 'default';
  const name = svc.metadata.name!;
  return (skipped, message) => report({ kind: 'Service', namespace, name, skipped, message });
}

/** MapIPsByIPFamily: the family's addresses, canonical; an entry that is no IP is dropped. */
function ipsOfFamily(ips: readonly unknown[] | undefined, family: IPFamily, field: string,
  drop: Drop): string[] {
  const out: string[] = [];
  for (const [i, s] of (ips ?? []).entries()) {
    const f = typeof s === 'string' ? familyOfIP(s) : undefined;
    if (f === family) out.push(canonicalIPFast(s as string)!);
    // Upstream skips empty strings silently (the API server never checked them).
    else if (f === undefined && s !== '') drop('entry', bad(`${field}[${i}]`, 'an IP address', s));
  }
  return out;
}

/** MapCIDRsByIPFamily: trimmed, parsed sloppily, network form; invalid or other family dropped. */
function cidrsOfFamily(cidrs: readonly unknown[] | undefined, family: IPFamily,
  drop: Drop): string[] {
  const out: string[] = [];
  for (const [i, raw] of (cidrs ?? []).entries()) {
    const c = typeof raw === 'string' ? parseCIDR(raw.trim()) : null;
    if (c?.family === family) out.push(formatCIDR(c));
    else if (!c) drop('entry', bad(`spec.loadBalancerSourceRanges[${i}]`, 'a CIDR', raw));
  }
  return out;
}

function lbVIPs(svc: Service, family: IPFamily, ipMode: boolean, drop: Drop): string[] {
  const out: string[] = [];
  for (const [i, ing] of (svc.status?.loadBalancer?.ingress ?? []).entries()) {
    const field = `status.loadBalancer.ingress[${i}]`;
    if (!isObject(ing)) { drop('entry', bad(field, 'an object', ing)); continue; }
    if (absent(ing.ip) || ing.ip === '') continue;
    if (ipMode && ing.ipMode === 'Proxy') continue;
    const f = typeof ing.ip === 'string' ? familyOfIP(ing.ip) : undefined;
    if (f === family) out.push(canonicalIPFast(ing.ip as string)!);
    else if (f === undefined) drop('entry', bad(`${field}.ip`, 'an IP address', ing.ip));
  }
  return out;
}

function externallyAccessibleByType(svc: Service): boolean {
  const type = svc.spec?.type ?? 'ClusterIP';
  return type === 'LoadBalancer' || type === 'NodePort' ||
    (type === 'ClusterIP' && (svc.spec?.externalIPs?.length ?? 0) > 0);
}

/** Upstream ShouldSkipService: headless and ExternalName services have no rules. */
export function shouldSkipService(svc: Service): boolean {
  const ip = svc.spec?.clusterIP ?? '';
  return ip === '' || ip === 'None' || svc.spec?.type === 'ExternalName';
}

/** A list of strings each passing `ok`; the first bad entry's problem. */
function checkEach(field: string, v: unknown, what: string, ok: (s: string) => boolean):
  string | undefined {
  const notList = checkList(field, v);
  if (notList || absent(v)) return notList;
  const i = (v as unknown[]).findIndex((x) => typeof x !== 'string' || !ok(x));
  return i < 0 ? undefined : bad(`${field}[${i}]`, what, (v as unknown[])[i]);
}

const isClusterIP = (s: string) => s === '' || s === 'None' || familyOfIP(s) !== undefined;

function affinityProblem(spec: Record<string, unknown>): string | undefined {
  if (spec.sessionAffinity !== 'ClientIP') return undefined;
  const cfg = spec.sessionAffinityConfig;
  if (absent(cfg)) return undefined;
  if (!isObject(cfg)) return bad('spec.sessionAffinityConfig', 'an object', cfg);
  if (absent(cfg.clientIP)) return undefined;
  if (!isObject(cfg.clientIP)) return bad('spec.sessionAffinityConfig.clientIP', 'an object',
    cfg.clientIP);
  return checkInt('spec.sessionAffinityConfig.clientIP.timeoutSeconds',
    cfg.clientIP.timeoutSeconds, 1, MAX_STICKY_SECONDS);
}

/**
 * Source ranges are an access control: entries that are no CIDR are dropped (upstream), but a
 * list none of whose entries is a CIDR would become "allow every source", so such a Service is
 * left out instead.
 */
function sourceRangesProblem(v: unknown): string | undefined {
  const notList = checkList('spec.loadBalancerSourceRanges', v);
  if (notList || absent(v) || (v as unknown[]).length === 0) return notList;
  const any = (v as unknown[]).some((c) => typeof c === 'string' && parseCIDR(c.trim()) !== null);
  return any ? undefined : `spec.loadBalancerSourceRanges: no entry is a CIDR, got ${shown(v)}` +
    ' (an empty list would allow every source)';
}

function annotationProblem(md: Record<string, unknown>): string | undefined {
  const ann = md.annotations;
  if (absent(ann)) return undefined;
  if (!isObject(ann)) return bad('metadata.annotations', 'a map of strings', ann);
  return checkString(`metadata.annotations["${HINTS_ANNOTATION}"]`, ann[HINTS_ANNOTATION]) ??
    checkString(`metadata.annotations["${TOPOLOGY_MODE_ANNOTATION}"]`,
      ann[TOPOLOGY_MODE_ANNOTATION]);
}

function statusProblem(status: unknown): string | undefined {
  if (absent(status)) return undefined;
  if (!isObject(status)) return bad('status', 'an object', status);
  const lb = status.loadBalancer;
  if (absent(lb)) return undefined;
  if (!isObject(lb)) return bad('status.loadBalancer', 'an object', lb);
  return checkList('status.loadBalancer.ingress', lb.ingress);
}

/** The first bad service-wide field a rule would be built from; undefined when all are fine. */
export function serviceProblem(svc: Service): string | undefined {
  const md = svc.metadata as unknown;
  if (!isObject(md)) return bad('metadata', 'an object', md);
  const spec = svc.spec as unknown;
  if (!absent(spec) && !isObject(spec)) return bad('spec', 'an object', spec);
  const sp = (spec ?? {}) as Record<string, unknown>;
  return checkObjectName('Service', md.namespace ?? 'default', md.name) ??
    annotationProblem(md) ??
    checkEnum('spec.type', sp.type, TYPES) ??
    checkString('spec.clusterIP', sp.clusterIP) ??
    (isClusterIP((sp.clusterIP as string | undefined) ?? '') ? undefined
      : bad('spec.clusterIP', 'an IP address or None', sp.clusterIP)) ??
    checkEach('spec.clusterIPs', sp.clusterIPs, 'an IP address or None', isClusterIP) ??
    checkEach('spec.ipFamilies', sp.ipFamilies, 'IPv4 or IPv6', (f) => FAMILIES.includes(f)) ??
    checkEnum('spec.sessionAffinity', sp.sessionAffinity, AFFINITIES) ??
    affinityProblem(sp) ??
    checkEnum('spec.externalTrafficPolicy', sp.externalTrafficPolicy, POLICIES) ??
    checkEnum('spec.internalTrafficPolicy', sp.internalTrafficPolicy, POLICIES) ??
    checkInt('spec.healthCheckNodePort', sp.healthCheckNodePort, 0, 65535) ??
    checkList('spec.externalIPs', sp.externalIPs) ??
    sourceRangesProblem(sp.loadBalancerSourceRanges) ??
    checkList('spec.ports', sp.ports) ??
    checkString('spec.trafficDistribution', sp.trafficDistribution) ??
    statusProblem(svc.status);
}

/** The first bad field of `spec.ports[i]`; undefined when the port is fine. */
export function portProblem(p: unknown, i: number): string | undefined {
  if (isObject(p) && isPortName(p.name) && (absent(p.protocol) || isProtocol(p.protocol)) &&
    isInt(p.port, 1, 65535) && (absent(p.nodePort) || isInt(p.nodePort, 0, 65535))) {
    return undefined;
  }
  const f = `spec.ports[${i}]`;
  if (!isObject(p)) return bad(f, 'an object', p);
  return checkPortName(`${f}.name`, p.name) ??
    checkEnum(`${f}.protocol`, p.protocol, PROTOCOLS) ??
    (isInt(p.port, 1, 65535) ? undefined : bad(`${f}.port`, 'an integer in 1..65535', p.port)) ??
    checkInt(`${f}.nodePort`, p.nodePort, 0, 65535);
}

function portInfo(svc: Service, port: ServicePort, family: IPFamily, clusterIP: string,
  opts: ServiceTrackerOptions, drop: Drop): ServicePortInfo {
  const spec = svc.spec ?? {};
  const ns = svc.metadata?.namespace ?? 'default';
  const name = svc.metadata?.name ?? '';
  const protocol = (port.protocol ?? 'TCP') as Protocol;
  const extLocal = externallyAccessibleByType(svc) && spec.externalTrafficPolicy === 'Local';
  const affinity = spec.sessionAffinity === 'ClientIP';
  const needsHC = spec.type === 'LoadBalancer' && extLocal;
  const ann = svc.metadata?.annotations ?? {};
  const info: ServicePortInfo = {
    name: { namespace: ns, name, port: port.name ?? '', protocol },
    clusterIP: canonicalIPFast(clusterIP)!,
    port: port.port,
    protocol,
    nodePort: port.nodePort ?? 0,
    loadBalancerVIPs: lbVIPs(svc, family, opts.loadBalancerIPMode ?? true, drop),
    sessionAffinityClientIP: affinity,
    stickyMaxAgeSeconds: affinity
      ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_STICKY_SECONDS) : 0,
    externalIPs: ipsOfFamily(spec.externalIPs, family, 'spec.externalIPs', drop),
    loadBalancerSourceRanges: cidrsOfFamily(spec.loadBalancerSourceRanges, family, drop),
    healthCheckNodePort: needsHC ? (spec.healthCheckNodePort ?? 0) : 0,
    externalPolicyLocal: extLocal,
    internalPolicyLocal: spec.internalTrafficPolicy === 'Local',
    hintsAnnotation: ann[HINTS_ANNOTATION] ?? ann[TOPOLOGY_MODE_ANNOTATION] ?? '',
    ...(spec.trafficDistribution ? { trafficDistribution: spec.trafficDistribution } : {}),
  };
  return info;
}

/**
 * The service ports of one Service for one family (upstream serviceToServiceMap), each built
 * only from checked fields. Reported to `opts.report`: the Service or a port left out, and each
 * address entry dropped (once, though every port reads the lists).
 */
export function serviceToServicePorts(svc: Service | undefined,
  opts: ServiceTrackerOptions): Map<string, ServicePortInfo> {
  const out = new Map<string, ServicePortInfo>();
  if (!svc || shouldSkipService(svc)) return out;
  const problem = serviceProblem(svc);
  if (problem !== undefined) {
    const md: Record<string, unknown> = isObject(svc.metadata) ? svc.metadata : {};
    opts.report?.({ kind: 'Service', namespace: String(md.namespace ?? 'default'),
      name: String(md.name ?? ''), skipped: 'object', message: problem });
    return out;
  }
  const cip = clusterIPOfFamily(svc, opts.family);
  if (cip === '' || canonicalIPFast(cip) === undefined) return out;
  const drop = dropper(svc, opts.report);
  // Entries are dropped for every port alike: report them for the first port only.
  let portDrop = drop;
  for (const [i, p] of (svc.spec?.ports ?? []).entries()) {
    const why = portProblem(p, i);
    if (why !== undefined) { drop('port', why); continue; }
    const info = portInfo(svc, p, opts.family, cip, opts, portDrop);
    portDrop = () => undefined;
    out.set(servicePortKey(info.name), info);
  }
  return out;
}

/** Structural equality of two derived port maps (upstream compares with reflect.DeepEqual). */
export function samePortMaps(a: ReadonlyMap<string, ServicePortInfo>,
  b: ReadonlyMap<string, ServicePortInfo>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (!w || JSON.stringify(v) !== JSON.stringify(w)) return false;
  }
  return true;
}

/** What `checkout` reports: the whole map plus what changed since the previous checkout. */
export interface ServiceCheckout {
  readonly services: ServicePortMap;
  /** `ns/name` of every Service whose derived ports changed. */
  readonly changedServices: ReadonlySet<string>;
  /** Service-port keys (old and new) of those Services. */
  readonly changedKeys: ReadonlySet<string>;
}

/**
 * Accumulates Service events between syncs. `update(prev, cur)` with `cur` undefined deletes.
 * As upstream, an update that leaves the derived ports unchanged is not a change.
 */
export class ServiceChangeTracker {
  private readonly applied = new Map<string, Map<string, ServicePortInfo>>();
  private readonly pending = new Map<string, Map<string, ServicePortInfo>>();
  private readonly ports = new Map<string, ServicePortInfo>();

  constructor(private readonly opts: ServiceTrackerOptions) {}

  /** Records one event; true when it leaves a pending change for the next checkout. */
  update(previous: Service | undefined, current: Service | undefined): boolean {
    const obj = current ?? previous;
    if (!obj) return false;
    const nn = namespacedName(obj);
    const derived = serviceToServicePorts(current, this.opts);
    if (samePortMaps(derived, this.applied.get(nn) ?? new Map())) this.pending.delete(nn);
    else this.pending.set(nn, derived);
    return this.pending.size > 0;
  }

  /** Applies pending changes (upstream ServicePortMap.Update) and reports them. */
  checkout(): ServiceCheckout {
    const changedServices = new Set<string>();
    const changedKeys = new Set<string>();
    for (const [nn, next] of this.pending) {
      const prev = this.applied.get(nn);
      for (const k of prev?.keys() ?? []) { this.ports.delete(k); changedKeys.add(k); }
      for (const [k, v] of next) { this.ports.set(k, v); changedKeys.add(k); }
      if (next.size === 0) this.applied.delete(nn);
      else this.applied.set(nn, next);
      changedServices.add(nn);
    }
    this.pending.clear();
    return { services: this.ports, changedServices, changedKeys };
  }
}
