// EndpointSlices → endpoints per service port, as upstream's EndpointsChangeTracker and
// EndpointSliceCache, for one IP family. Slices are grouped by their
// `kubernetes.io/service-name` label (slices without it are ignored, so Services without
// selectors work with manually written slices that carry the label).

import { formatIP, parseIP } from '../api/net.js';
import type { Endpoint, EndpointSlice } from '../api/types.js';
import { isCanonicalIPv4 } from './ip-fast.js';
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
}

function hintSet(list: ReadonlyArray<{ name: string }> | undefined): Set<string> | undefined {
  if (!list || list.length === 0) return undefined;
  return new Set(list.map((h) => h.name));
}

/** Dotted quads already in canonical form are the common case: no parsing. */
function canonicalOfFamily(raw: string, family: IPFamily): string | undefined {
  if (family === 'IPv4' && isCanonicalIPv4(raw)) return raw;
  const parsed = parseIP(raw);
  return parsed && parsed.family === family ? formatIP(parsed) : undefined;
}

function endpointInfo(ep: Endpoint, port: number, family: IPFamily,
  opts: EndpointsTrackerOptions): EndpointInfo | undefined {
  const raw = ep.addresses?.[0];
  if (raw === undefined) return undefined;
  const ip = canonicalOfFamily(raw, family);
  if (ip === undefined) return undefined;
  const c = ep.conditions ?? {};
  const zoneHints = hintSet(ep.hints?.forZones);
  const nodeHints = (opts.preferSameTrafficDistribution ?? true)
    ? hintSet(ep.hints?.forNodes) : undefined;
  // One literal (absent optionals are undefined): 100k of these per large sync.
  return {
    ip,
    port,
    endpoint: joinHostPort(ip, port),
    isLocal: ep.nodeName !== undefined && opts.nodeName !== '' && ep.nodeName === opts.nodeName,
    ready: c.ready === undefined || c.ready === null || c.ready,
    serving: c.serving === undefined || c.serving === null || c.serving,
    terminating: c.terminating === true,
    zoneHints,
    nodeHints,
    nodeName: ep.nodeName,
    zone: ep.zone,
  };
}

/**
 * The endpoints map of one service from all its slices (upstream endpointInfoByServicePort +
 * endpointsMapFromEndpointInfo). Duplicates by `ip:port`: a later one replaces an earlier one
 * unless it is terminating. Slices are visited by name (upstream: Go map order, unspecified).
 * Each list is sorted by its `ip:port` string, byte-wise.
 */
export function endpointsOfService(namespace: string, service: string,
  slices: ReadonlyMap<string, EndpointSlice>, opts: EndpointsTrackerOptions):
  Map<string, EndpointInfo[]> {
  const byPort = new Map<string, Map<string, EndpointInfo>>();
  const names = [...slices.keys()].sort();
  for (const sliceName of names) {
    const slice = slices.get(sliceName)!;
    for (const p of slice.ports ?? []) {
      if (p.name === undefined || p.name === null || !p.port) continue;
      const spn: ServicePortName = {
        namespace, name: service, port: p.name, protocol: (p.protocol ?? 'TCP') as Protocol,
      };
      const key = servicePortKey(spn);
      let set = byPort.get(key);
      if (!set) byPort.set(key, (set = new Map()));
      for (const ep of slice.endpoints ?? []) {
        const info = endpointInfo(ep, p.port, opts.family, opts);
        if (!info) continue;
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
  /** service `ns/name` → slice name → slice (the latest object seen). */
  private readonly slices = new Map<string, Map<string, EndpointSlice>>();
  private readonly applied = new Map<string, Map<string, EndpointInfo[]>>();
  private readonly touched = new Set<string>();
  private readonly endpoints = new Map<string, EndpointInfo[]>();

  constructor(private readonly opts: EndpointsTrackerOptions) {}

  /** Records one slice event; false when the slice is ignored (family, missing label). */
  update(slice: EndpointSlice, removed = false): boolean {
    if (slice.addressType !== this.opts.family) return false;
    const svc = slice.metadata?.labels?.[LABEL_SERVICE_NAME];
    const name = slice.metadata?.name;
    if (!svc || !name) return false;
    const nn = `${slice.metadata?.namespace ?? 'default'}/${svc}`;
    let bySlice = this.slices.get(nn);
    if (!bySlice) this.slices.set(nn, (bySlice = new Map()));
    if (removed) {
      if (!bySlice.delete(name)) return false;
    } else {
      bySlice.set(name, slice);
    }
    this.touched.add(nn);
    return true;
  }

  /** Applies pending changes (upstream EndpointsMap.Update) and reports them. */
  checkout(): EndpointsCheckout {
    const changedServices = new Set<string>();
    const changedKeys = new Set<string>();
    for (const nn of this.touched) {
      const slash = nn.indexOf('/');
      const bySlice = this.slices.get(nn) ?? new Map<string, EndpointSlice>();
      const next = endpointsOfService(nn.slice(0, slash), nn.slice(slash + 1), bySlice,
        this.opts);
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
