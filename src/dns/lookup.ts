// The name → items step of the cluster DNS, as CoreDNS's kubernetes plugin (plugin/kubernetes
// parse.go, kubernetes.go Records/findServices/findPods, reverse.go): a query name inside the
// cluster zone is parsed as `[_port._proto.|endpoint.]service.namespace.svc.<zone>` or
// `ip-with-dashes.namespace.pod.<zone>`, and looked up in the record index. The result is a
// list of items (an address or a name, a port, the name an SRV target takes) or a name error.
// Pure: the index in, items out.

import { ipFamilyOf } from '../api/net.js';
import { inZone, ipOfDashedLabel, ipOfReverseName, isReverseName, labelsBelow } from './names.js';
import { key, type DnsIndex, type DnsPort } from './records.js';

export type PodMode = 'disabled' | 'insecure' | 'verified';

/** One thing a name stands for (CoreDNS's msg.Service). */
export interface LookupItem {
  /** An IP (A/AAAA), or a name (ExternalName: CNAME). Names are lower case, no trailing dot. */
  readonly host: string;
  /** -1 when the service or slice declares no port (no SRV for it). */
  readonly port: number;
  /** The name an SRV record points at (`web.default.svc.cluster.local`, or the endpoint's). */
  readonly target: string;
}

/**
 * `nameError`: the name does not exist (NXDOMAIN). Otherwise the name exists; `items` may be
 * empty (NODATA).
 */
export interface LookupResult {
  readonly items: readonly LookupItem[];
  readonly nameError: boolean;
}

interface RecordRequest {
  readonly port: string;
  readonly protocol: string;
  readonly endpoint: string;
  readonly service: string;
  readonly namespace: string;
  readonly podOrSvc: '' | 'svc' | 'pod';
}

const EXISTS: LookupResult = { items: [], nameError: false };
const NO_ITEMS: LookupResult = { items: [], nameError: true };
const SENTINEL: readonly DnsPort[] = [{ name: '', protocol: '', port: -1 }];

const strip = (s: string) => (s.startsWith('_') ? s.slice(1) : s);

/** parseRequest: undefined for an invalid name (too long, neither svc nor pod). */
export function parseRequest(name: string, zone: string): RecordRequest | undefined {
  const empty: RecordRequest = { port: '', protocol: '', endpoint: '', service: '', namespace: '',
    podOrSvc: '' };
  const segs = labelsBelow(name, zone);
  const base = segs.join('.');
  if (base === '' || base === 'svc' || base === 'pod') return empty;
  let last = segs.length - 1;
  const podOrSvc = segs[last]!;
  if (podOrSvc !== 'svc' && podOrSvc !== 'pod') return undefined;
  const r = { ...empty, podOrSvc } as { -readonly [K in keyof RecordRequest]: RecordRequest[K] };
  if (--last < 0) return r;
  r.namespace = segs[last]!;
  if (--last < 0) return r;
  r.service = segs[last]!;
  if (--last < 0) return r;
  if (last === 0) r.endpoint = segs[0]!;
  else if (last === 1) {
    r.protocol = strip(segs[1]!);
    r.port = strip(segs[0]!);
  } else return undefined;
  return r;
}

const matchPort = (want: string, have: string) => want === '' || want === have;

export interface LookupOptions {
  readonly zone: string;
  readonly pods: PodMode;
}

/**
 * CoreDNS `Records`: what `name` (normalised, inside `zone`) stands for. Reverse names and names
 * of namespaces that do not exist are name errors.
 */
export function records(index: DnsIndex, name: string, o: LookupOptions): LookupResult {
  const r = parseRequest(name, o.zone);
  if (!r) return NO_ITEMS;
  if (r.podOrSvc === '') return EXISTS;
  if (isReverseName(name)) return NO_ITEMS;
  if (!index.namespaces.has(r.namespace)) return NO_ITEMS;
  return r.podOrSvc === 'pod' ? findPods(index, r, o) : findServices(index, r, o.zone);
}

function findPods(index: DnsIndex, r: RecordRequest, o: LookupOptions): LookupResult {
  if (o.pods === 'disabled') return NO_ITEMS;
  if (r.service === '') return EXISTS;
  const ip = ipOfDashedLabel(r.service);
  if (!ip) return NO_ITEMS;
  const target = `${r.service}.${r.namespace}.pod.${o.zone}`;
  if (o.pods === 'verified' && !index.podIPs.get(ip)?.has(r.namespace)) return NO_ITEMS;
  return { items: [{ host: ip, port: -1, target }], nameError: false };
}

function findServices(index: DnsIndex, r: RecordRequest, zone: string): LookupResult {
  if (r.service === '') return EXISTS;
  const k = key(r.namespace, r.service);
  const svc = index.services.get(k);
  if (!svc) return NO_ITEMS;
  const svcName = `${svc.name}.${svc.namespace}.svc.${zone}`;
  const items: LookupItem[] = [];
  let found = false;
  if (svc.externalName !== undefined) {
    // No endpoints, ports or protocols below an ExternalName; an IP as the name is no CNAME.
    if (r.endpoint || r.port || r.protocol || ipFamilyOf(svc.externalName)) return NO_ITEMS;
    return { items: [{ host: svc.externalName, port: -1, target: svcName }], nameError: false };
  }
  if (svc.headless || r.endpoint) {
    for (const ep of index.endpoints.get(k) ?? []) {
      if (r.endpoint && r.endpoint !== ep.label) continue;
      for (const p of ep.ports) {
        if (!matchPort(r.port, p.name) || !matchPort(r.protocol, p.protocol)) continue;
        found = true;
        items.push({ host: ep.ip, port: p.port, target: `${ep.label}.${svcName}` });
      }
    }
    return found ? { items, nameError: false } : NO_ITEMS;
  }
  for (const p of svc.ports.length ? svc.ports : SENTINEL) {
    if (!matchPort(r.port, p.name) || !matchPort(r.protocol, p.protocol)) continue;
    found = true;
    for (const ip of svc.clusterIPs) items.push({ host: ip, port: p.port, target: svcName });
  }
  return found ? { items, nameError: false } : NO_ITEMS;
}

/** CoreDNS `Reverse`: the names a reverse name's IP has (Service first, else endpoints). */
export function reverse(index: DnsIndex, name: string, o: LookupOptions): LookupResult {
  const ip = ipOfReverseName(name);
  if (!ip) {
    return inZone(name, o.zone) ? { items: [], nameError: records(index, name, o).nameError }
      : NO_ITEMS;
  }
  const names = index.ptr.get(ip);
  if (!names?.length) return NO_ITEMS;
  return { items: names.map((n) => ({ host: n, port: -1, target: n })), nameError: false };
}
