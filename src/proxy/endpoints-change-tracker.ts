// EndpointSlices → endpoints per service port, as upstream's EndpointsChangeTracker and
// EndpointSliceCache, for one IP family. Slices are grouped by their
// `kubernetes.io/service-name` label (slices without it are ignored, so Services without
// selectors work with manually written slices that carry the label). Each slice is converted
// on arrival into a checked `SliceInfo` (upstream newEndpointSliceInfo): a port or endpoint with
// a bad field is left out and reported to `opts.report` (upstream logs "Ignoring invalid
// endpoint port…"), a slice whose lists are not lists contributes nothing.

import { formatIP, isCanonicalIPv4, parseIP } from '../api/net.js';
import type { EndpointSlice } from '../api/types.js';
import {
  absent, bad, checkEnum, checkInt, checkList, checkObjectName, checkPortName, checkString,
  isInt, isObject, isPortName, isProtocol, type InputProblem, type ProblemReporter,
} from './input-check.js';
import { joinHostPort } from './keys.js';
import { servicePortKey } from './types.js';
import type { EndpointInfo, EndpointsMap, IPFamily, Protocol, ServicePortName } from './types.js';

export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';

export interface EndpointsTrackerOptions {
  readonly family: IPFamily;
  /** This proxier's node; endpoints on it are local. '' = none is local. */
  readonly nodeName: string;
  /** PreferSameTrafficDistribution feature (beta, on in 1.33): read `hints.forNodes`. */
  readonly preferSameTrafficDistribution?: boolean;
  /** Told about every slice, port or endpoint left out because a field is bad. */
  readonly report?: ProblemReporter;
}

/** One port of a slice, checked: named (possibly ''), 1..65535, a known protocol. */
interface SlicePort {
  readonly name: string;
  readonly port: number;
  readonly protocol: Protocol;
}

/** One usable port of a slice with the slice's usable endpoints at that port, in slice order. */
export interface SlicePortEndpoints {
  readonly name: string;
  readonly protocol: Protocol;
  readonly endpoints: readonly EndpointInfo[];
}

/**
 * What kube-proxy keeps of one EndpointSlice (upstream endpointSliceInfo), checked. Its
 * EndpointInfo objects are the ones the endpoints map holds: a checkout allocates none.
 */
export type SliceInfo = readonly SlicePortEndpoints[];

type Drop = (skipped: InputProblem['skipped'], message: string) => void;

/** Dotted quads already in canonical form are the common case: no parsing. */
function canonicalOfFamily(raw: unknown, family: IPFamily): string | undefined {
  if (typeof raw !== 'string') return undefined;
  if (family === 'IPv4' && isCanonicalIPv4(raw)) return raw;
  const parsed = parseIP(raw);
  return parsed && parsed.family === family ? formatIP(parsed) : undefined;
}

/** A hint list (`[{name}]`) as a set; undefined when empty; null when malformed. */
function hintSet(list: unknown): Set<string> | undefined | null {
  if (absent(list)) return undefined;
  if (!Array.isArray(list)) return null;
  if (list.length === 0) return undefined;
  const out = new Set<string>();
  for (const h of list) {
    if (!isObject(h) || typeof h.name !== 'string') return null;
    out.add(h.name);
  }
  return out;
}

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];

/** A slice port, or undefined (reported) when it cannot be used. */
function slicePort(p: unknown, i: number, drop: Drop): SlicePort | undefined {
  if (isObject(p) && typeof p.name === 'string' && isPortName(p.name) &&
    (absent(p.protocol) || isProtocol(p.protocol)) && isInt(p.port, 1, 65535)) {
    return { name: p.name, port: p.port, protocol: (p.protocol ?? 'TCP') as Protocol };
  }
  drop('port', slicePortProblem(p, `ports[${i}]`));
  return undefined;
}

function slicePortProblem(p: unknown, f: string): string {
  if (!isObject(p)) return bad(f, 'an object', p);
  // Upstream: "Ignoring port with nil name", "Ignoring invalid endpoint port" (nil or 0).
  if (absent(p.name)) return `${f}.name: must be set (may be "")`;
  if (absent(p.port) || p.port === 0) return `${f}.port: must be set`;
  return checkPortName(`${f}.name`, p.name) ?? checkEnum(`${f}.protocol`, p.protocol,
    PROTOCOLS) ?? checkInt(`${f}.port`, p.port, 1, 65535) ?? `${f}: cannot be used`;
}

const isFlag = (v: unknown) => v === undefined || v === null || typeof v === 'boolean';
const isText = (v: unknown) => v === undefined || v === null || typeof v === 'string';
const NONE: Readonly<Record<string, unknown>> = Object.freeze({});

/** Why endpoint `i` cannot be used (only called once it is known to be bad). */
function endpointProblem(ep: unknown, i: number, family: IPFamily): string {
  const f = `endpoints[${i}]`;
  if (!isObject(ep)) return bad(f, 'an object', ep);
  const addrs = ep.addresses;
  if (!Array.isArray(addrs) || addrs.length === 0) {
    return bad(`${f}.addresses`, 'a non-empty list', addrs);
  }
  if (canonicalOfFamily(addrs[0], family) === undefined) {
    return bad(`${f}.addresses[0]`, `an ${family} address`, addrs[0]);
  }
  const c = ep.conditions ?? NONE;
  return checkString(`${f}.nodeName`, ep.nodeName) ?? checkString(`${f}.zone`, ep.zone) ??
    (isObject(c) && isFlag(c.ready) && isFlag(c.serving) && isFlag(c.terminating) ? undefined
      : bad(`${f}.conditions`, 'an object of booleans', c)) ??
    bad(`${f}.hints`, 'lists of {name}', ep.hints);
}

/**
 * A slice endpoint, or undefined (reported) when it cannot be used. The checks of the common,
 * valid case allocate nothing: 100k endpoints per large sync.
 */
function sliceEndpoint(ep: unknown, i: number, port: number, opts: EndpointsTrackerOptions,
  drop: Drop): EndpointInfo | undefined {
  const o = (isObject(ep) ? ep : NONE) as Record<string, unknown>;
  const addrs = o.addresses;
  const ip = Array.isArray(addrs) ? canonicalOfFamily(addrs[0], opts.family) : undefined;
  const c = (o.conditions ?? NONE) as Record<string, unknown>;
  const h = (o.hints ?? NONE) as Record<string, unknown>;
  const fine = ip !== undefined && isText(o.nodeName) && isText(o.zone) && isObject(c) &&
    isFlag(c.ready) && isFlag(c.serving) && isFlag(c.terminating) && isObject(h);
  const zoneHints = fine ? hintSet(h.forZones) : undefined;
  const nodeHints = fine && (opts.preferSameTrafficDistribution ?? true)
    ? hintSet(h.forNodes) : undefined;
  if (!fine || zoneHints === null || nodeHints === null) {
    drop('endpoint', endpointProblem(ep, i, opts.family));
    return undefined;
  }
  const nodeName = (o.nodeName ?? undefined) as string | undefined;
  // One literal (absent optionals are undefined).
  return {
    ip,
    port,
    endpoint: joinHostPort(ip, port),
    isLocal: nodeName !== undefined && opts.nodeName !== '' && nodeName === opts.nodeName,
    ready: c.ready === undefined || c.ready === null || c.ready === true,
    serving: c.serving === undefined || c.serving === null || c.serving === true,
    terminating: c.terminating === true,
    zoneHints,
    nodeHints,
    nodeName,
    zone: (o.zone ?? undefined) as string | undefined,
  };
}

/**
 * The checked form of one slice; undefined (reported) when its port or endpoint lists are not
 * lists, so it contributes nothing.
 */
export function sliceInfo(slice: EndpointSlice, opts: EndpointsTrackerOptions,
  drop: Drop): SliceInfo | undefined {
  const raw = slice as unknown as Record<string, unknown>;
  const why = checkList('ports', raw.ports) ?? checkList('endpoints', raw.endpoints);
  if (why !== undefined) { drop('object', why); return undefined; }
  const rawPorts = (raw.ports ?? []) as unknown[];
  const ports: SlicePort[] = [];
  for (let i = 0; i < rawPorts.length; i++) {
    const port = slicePort(rawPorts[i], i, drop);
    if (port) ports.push(port);
  }
  if (ports.length === 0) return [];
  const rawEndpoints = (raw.endpoints ?? []) as unknown[];
  const first: EndpointInfo[] = [];
  for (let i = 0; i < rawEndpoints.length; i++) {
    const e = sliceEndpoint(rawEndpoints[i], i, ports[0]!.port, opts, drop);
    if (e) first.push(e);
  }
  return ports.map((p, k) => ({ name: p.name, protocol: p.protocol,
    endpoints: k === 0 ? first : first.map((e) => atPort(e, p.port)) }));
}

function atPort(e: EndpointInfo, port: number): EndpointInfo {
  return {
    ip: e.ip,
    port,
    endpoint: joinHostPort(e.ip, port),
    isLocal: e.isLocal,
    ready: e.ready,
    serving: e.serving,
    terminating: e.terminating,
    zoneHints: e.zoneHints,
    nodeHints: e.nodeHints,
    nodeName: e.nodeName,
    zone: e.zone,
  };
}

/**
 * The endpoints map of one service from all its slices (upstream endpointInfoByServicePort +
 * endpointsMapFromEndpointInfo). Duplicates by `ip:port`: a later one replaces an earlier one
 * unless it is terminating. Slices are visited by name (upstream: Go map order, unspecified).
 * Each list is sorted by its `ip:port` string, byte-wise.
 */
export function endpointsOfService(namespace: string, service: string,
  slices: ReadonlyMap<string, SliceInfo>): Map<string, EndpointInfo[]> {
  const byPort = new Map<string, Map<string, EndpointInfo>>();
  const names = [...slices.keys()].sort();
  for (const sliceName of names) {
    for (const p of slices.get(sliceName)!) {
      const spn: ServicePortName = { namespace, name: service, port: p.name, protocol: p.protocol };
      const key = servicePortKey(spn);
      let set = byPort.get(key);
      if (!set) byPort.set(key, (set = new Map()));
      for (const info of p.endpoints) {
        if (!set.has(info.endpoint) || !info.terminating) set.set(info.endpoint, info);
      }
    }
  }
  const out = new Map<string, EndpointInfo[]>();
  for (const [key, set] of byPort) {
    if (set.size === 0) continue;
    const list = [...set.values()];
    list.sort((a, b) => (a.endpoint < b.endpoint ? -1 : a.endpoint > b.endpoint ? 1 : 0));
    out.set(key, list);
  }
  return out;
}

function endpointFingerprint(e: EndpointInfo): string {
  const sorted = (s?: ReadonlySet<string>) => (s ? [...s].sort().join(',') : '-');
  return [e.endpoint, e.isLocal, e.ready, e.serving, e.terminating, sorted(e.zoneHints),
    sorted(e.nodeHints), e.nodeName ?? '', e.zone ?? ''].join('|');
}

/** Structural equality of two endpoint maps of one service. */
export function sameEndpointMaps(a: ReadonlyMap<string, readonly EndpointInfo[]>,
  b: ReadonlyMap<string, readonly EndpointInfo[]>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, list] of a) {
    const other = b.get(k);
    if (!other || other.length !== list.length) return false;
    for (let i = 0; i < list.length; i++) {
      if (endpointFingerprint(list[i]!) !== endpointFingerprint(other[i]!)) return false;
    }
  }
  return true;
}

export interface EndpointsCheckout {
  readonly endpoints: EndpointsMap;
  /** `ns/name` of every service whose derived endpoints changed. */
  readonly changedServices: ReadonlySet<string>;
  /** Service-port keys (old and new) of those services. */
  readonly changedKeys: ReadonlySet<string>;
}

/**
 * Accumulates EndpointSlice events between syncs. `update(slice, removed)` as upstream's
 * EndpointSliceUpdate; a service counts as changed only when its derived endpoints differ.
 */
export class EndpointsChangeTracker {
  /** service `ns/name` → slice name → the latest slice seen, checked. */
  private readonly slices = new Map<string, Map<string, SliceInfo>>();
  private readonly applied = new Map<string, Map<string, EndpointInfo[]>>();
  private readonly touched = new Set<string>();
  private readonly endpoints = new Map<string, EndpointInfo[]>();

  constructor(private readonly opts: EndpointsTrackerOptions) {}

  /** Records one slice event; false when the slice is ignored (family, missing label). */
  update(slice: EndpointSlice, removed = false): boolean {
    if (slice.addressType !== this.opts.family) return false;
    const md = slice.metadata as unknown;
    const labels = isObject(md) && isObject(md.labels) ? md.labels : undefined;
    const svc = labels?.[LABEL_SERVICE_NAME];
    const name = isObject(md) ? md.name : undefined;
    if (!svc || !name) return false;
    const namespace = (md as Record<string, unknown>).namespace ?? 'default';
    const why = checkObjectName('EndpointSlice', namespace, name) ??
      (typeof svc === 'string' && checkObjectName('Service', namespace, svc) === undefined
        ? undefined : bad(`metadata.labels["${LABEL_SERVICE_NAME}"]`, 'a Service name', svc));
    if (why !== undefined) {
      this.opts.report?.({ kind: 'EndpointSlice', namespace: String(namespace),
        name: String(name), skipped: 'object', message: why });
      return false;
    }
    const nn = `${namespace as string}/${svc as string}`;
    let bySlice = this.slices.get(nn);
    if (!bySlice) this.slices.set(nn, (bySlice = new Map()));
    const info = removed ? undefined : sliceInfo(slice, this.opts, this.dropper(namespace as
      string, name as string));
    if (info === undefined) {
      if (!bySlice.delete(name as string) && removed) return false;
    } else {
      bySlice.set(name as string, info);
    }
    this.touched.add(nn);
    return true;
  }

  private dropper(namespace: string, name: string): Drop {
    const report = this.opts.report;
    if (!report) return () => undefined;
    return (skipped, message) => report({ kind: 'EndpointSlice', namespace, name, skipped,
      message });
  }

  /** Applies pending changes (upstream EndpointsMap.Update) and reports them. */
  checkout(): EndpointsCheckout {
    const changedServices = new Set<string>();
    const changedKeys = new Set<string>();
    for (const nn of this.touched) {
      const slash = nn.indexOf('/');
      const bySlice = this.slices.get(nn) ?? new Map<string, SliceInfo>();
      const next = endpointsOfService(nn.slice(0, slash), nn.slice(slash + 1), bySlice);
      if (bySlice.size === 0) this.slices.delete(nn);
      const prev = this.applied.get(nn) ?? new Map<string, EndpointInfo[]>();
      if (sameEndpointMaps(prev, next)) continue;
      for (const k of prev.keys()) { this.endpoints.delete(k); changedKeys.add(k); }
      for (const [k, v] of next) { this.endpoints.set(k, v); changedKeys.add(k); }
      if (next.size === 0) this.applied.delete(nn);
      else this.applied.set(nn, next);
      changedServices.add(nn);
    }
    this.touched.clear();
    return { endpoints: this.endpoints, changedServices, changedKeys };
  }
}
