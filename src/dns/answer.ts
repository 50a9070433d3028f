// One question → the answer the cluster DNS gives, as CoreDNS's kubernetes plugin handler
// (plugin/kubernetes/handler.go with plugin/backend_lookup.go) configured as kubeadm does:
// `kubernetes cluster.local in-addr.arpa ip6.arpa { pods insecure; fallthrough in-addr.arpa
// ip6.arpa }`. Names outside those zones, and reverse names the cluster does not know, are
// `forward` (to the host's resolvers). Pure: the record index and the question in, records out.
//
// Where kdp differs from CoreDNS, on purpose (each keeps the spec's record set):
// - TXT and SOA on an existing non-apex name answer NODATA like every other type (CoreDNS
//   answers TXT with NXDOMAIN for `<ns>.svc.<zone>` and SOA with NODATA for unknown names).

import type { Answer } from 'dns-packet';
import { ipFamilyOf } from '../api/net.js';
import { inZone, normalizeName, REVERSE_V4, REVERSE_V6 } from './names.js';
import { records, reverse, type LookupItem, type LookupOptions, type PodMode } from './lookup.js';
import type { DnsIndex } from './records.js';

export const DNS_SCHEMA_VERSION = '1.1.0';
const VERSION_TTL = 28800;
const MAX_CNAME_CHAIN = 10;

export interface AnswerOptions {
  /** Cluster domain, normalised (`cluster.local`). */
  readonly zone: string;
  /** TTL of every record (CoreDNS default 5, kubeadm's Corefile 30). */
  readonly ttl: number;
  readonly pods: PodMode;
  /** Also answer PTR in in-addr.arpa/ip6.arpa, forwarding names not found (kubeadm's). */
  readonly reverseZones: boolean;
  /** Addresses for `ns.dns.<zone>` (the DNS Service's IPs, else the server's own). */
  readonly nsAddresses?: (index: DnsIndex) => readonly string[];
}

export type Rcode = 'NOERROR' | 'FORMERR' | 'SERVFAIL' | 'NXDOMAIN' | 'NOTIMP' | 'REFUSED';

export interface Question {
  readonly name: string;
  /** dns-packet's type name: `A`, `SRV`, `UNKNOWN_65280`… */
  readonly type: string;
}

export type Outcome =
  | {
    readonly kind: 'answer';
    readonly rcode: Rcode;
    readonly authoritative: boolean;
    readonly answers: readonly Answer[];
    readonly authorities: readonly Answer[];
    readonly additionals: readonly Answer[];
    /** ExternalName out of the zone: the CNAME target to resolve upstream and append. */
    readonly chase?: { readonly name: string; readonly type: 'A' | 'AAAA' };
  }
  | { readonly kind: 'forward' };

const FORWARD: Outcome = { kind: 'forward' };

/** The zone of ours a name is in (longest match), or undefined. */
export function zoneOf(name: string, o: AnswerOptions): string | undefined {
  if (inZone(name, o.zone)) return o.zone;
  if (o.reverseZones && inZone(name, REVERSE_V4)) return REVERSE_V4;
  if (o.reverseZones && inZone(name, REVERSE_V6)) return REVERSE_V6;
  return undefined;
}

/** The answer to one question (its name as sent: case is kept in the records). */
export function answerQuestion(index: DnsIndex, q: Question, o: AnswerOptions): Outcome {
  const name = normalizeName(q.name);
  const zone = zoneOf(name, o);
  if (zone === undefined) return FORWARD;
  const qname = q.name.replace(/\.$/, '');
  const ctx: Ctx = { index, o, zone, lo: { zone: o.zone, pods: o.pods } };
  let res: { records: Answer[]; extra?: Answer[]; nameError: boolean; chase?: string };
  switch (q.type) {
    case 'A':
    case 'AAAA':
      res = address(ctx, name, qname, q.type, []);
      break;
    case 'TXT':
      res = txt(ctx, name, qname);
      break;
    case 'CNAME':
      res = cname(ctx, name, qname);
      break;
    case 'PTR':
      res = ptr(ctx, name, qname);
      break;
    case 'SRV':
      res = srv(ctx, name, qname);
      break;
    case 'SOA':
      res = name === zone ? { records: [soa(ctx, qname)], nameError: false } : fake(ctx, name);
      break;
    case 'NS':
      res = name === zone && zone === o.zone ? ns(ctx, qname) : fake(ctx, name);
      break;
    case 'AXFR':
    case 'IXFR':
      return reply('REFUSED', false, [], [], []);
    default:
      // Any other type: a fake A lookup tells NODATA from NXDOMAIN.
      res = fake(ctx, name);
  }
  if (res.nameError) {
    // kubeadm's `fallthrough in-addr.arpa ip6.arpa`: reverse names the cluster does not know
    // are the rest of the world's.
    if (zone !== o.zone) return FORWARD;
    if (!index.synced) return reply('SERVFAIL', true, [], [soa(ctx, zoneName(qname, zone))], []);
    return reply('NXDOMAIN', true, [], [soa(ctx, zoneName(qname, zone))], []);
  }
  if (res.records.length === 0 && !res.chase) {
    return reply('NOERROR', true, [], [soa(ctx, zoneName(qname, zone))], []);
  }
  const out: Outcome = { kind: 'answer', rcode: 'NOERROR', authoritative: true,
    answers: res.records, authorities: [], additionals: res.extra ?? [] };
  return res.chase ? { ...out, chase: { name: res.chase, type: q.type === 'AAAA' ? 'AAAA' : 'A' } }
    : out;
}

function reply(rcode: Rcode, authoritative: boolean, answers: Answer[], authorities: Answer[],
  additionals: Answer[]): Outcome {
  return { kind: 'answer', rcode, authoritative, answers, authorities, additionals };
}

interface Ctx {
  readonly index: DnsIndex;
  readonly o: AnswerOptions;
  readonly zone: string;
  readonly lo: LookupOptions;
}

/** The zone as spelled in the question (CoreDNS keeps the query's case). */
function zoneName(qname: string, zone: string): string {
  return qname.slice(qname.length - zone.length);
}

/** The SOA of negative answers (plugin/backend_lookup.go SOA). */
function soa(ctx: Ctx, zone: string): Answer {
  const ttl = ctx.o.ttl;
  return { name: zone, type: 'SOA', class: 'IN', ttl: Math.min(ttl, 300), data: {
    mname: `ns.dns.${zone}`, rname: `hostmaster.${zone}`, serial: ctx.index.serial >>> 0,
    refresh: 7200, retry: 1800, expire: 86400, minimum: ttl,
  } };
}

/** Services(): what a name in our zones stands for, with the special names of the plugin. */
function services(ctx: Ctx, name: string, type: string): {
  items: readonly LookupItem[]; nameError: boolean;
} {
  if (ctx.zone !== ctx.o.zone) return { items: [], nameError: true };
  if (name === `ns.dns.${ctx.o.zone}` && (type === 'A' || type === 'AAAA')) {
    const target = `ns.dns.${ctx.o.zone}`;
    const addrs = ctx.o.nsAddresses?.(ctx.index) ?? [];
    return { items: addrs.map((host) => ({ host, port: -1, target })),
      nameError: false };
  }
  // The apex (checkForApex): apex.dns.<zone> holds nothing here, so the zone itself answers.
  return records(ctx.index, name, ctx.lo);
}

function fake(ctx: Ctx, name: string) {
  return { records: [], nameError: services(ctx, name, 'A').nameError };
}

function address(ctx: Ctx, name: string, qname: string, type: 'A' | 'AAAA',
  chain: readonly string[]): {
  records: Answer[]; nameError: boolean; chase?: string;
} {
  const { items, nameError } = services(ctx, name, type);
  if (nameError) return { records: [], nameError };
  const family = type === 'A' ? 'IPv4' : 'IPv6';
  const out: Answer[] = [];
  const seen = new Set<string>();
  let chase: string | undefined;
  for (const it of items) {
    const fam = ipFamilyOf(it.host);
    if (fam) {
      if (fam === family && !seen.has(it.host)) {
        seen.add(it.host);
        out.push({ name: qname, type, class: 'IN', ttl: ctx.o.ttl, data: it.host });
      }
      continue;
    }
    // A name (ExternalName): CNAME, then the target's addresses.
    if (it.host === name || chain.length > MAX_CNAME_CHAIN || chain.includes(it.host)) continue;
    const rec: Answer = { name: qname, type: 'CNAME', class: 'IN', ttl: ctx.o.ttl, data: it.host };
    if (zoneOf(it.host, ctx.o) === ctx.o.zone) {
      const next = address({ ...ctx, zone: ctx.o.zone }, it.host, it.host, type, [...chain, name]);
      if (!next.nameError && next.records.length) out.push(rec, ...next.records);
      continue;
    }
    out.push(rec);
    chase ??= it.host;
  }
  return { records: out, nameError: false, chase };
}

function txt(ctx: Ctx, name: string, qname: string) {
  if (ctx.zone === ctx.o.zone && name === `dns-version.${ctx.o.zone}`) {
    return { records: [{ name: qname, type: 'TXT', class: 'IN', ttl: VERSION_TTL,
      data: DNS_SCHEMA_VERSION } as Answer], nameError: false };
  }
  return fake(ctx, name);
}

function cname(ctx: Ctx, name: string, qname: string) {
  const { items, nameError } = services(ctx, name, 'CNAME');
  const first = items[0];
  const records: Answer[] = first && !ipFamilyOf(first.host)
    ? [{ name: qname, type: 'CNAME', class: 'IN', ttl: ctx.o.ttl, data: first.host }] : [];
  return { records, nameError };
}

function ptr(ctx: Ctx, name: string, qname: string) {
  const { items, nameError } = reverse(ctx.index, name, ctx.lo);
  const seen = new Set<string>();
  const records: Answer[] = [];
  for (const it of items) {
    if (seen.has(it.host)) continue;
    seen.add(it.host);
    records.push({ name: qname, type: 'PTR', class: 'IN', ttl: ctx.o.ttl, data: it.host });
  }
  return { records, nameError };
}

/** SRV with CoreDNS's weights (100 split evenly per priority) and the targets' addresses. */
function srv(ctx: Ctx, name: string, qname: string) {
  const res = services(ctx, name, 'SRV');
  if (res.nameError) return { records: [], nameError: true };
  const items = res.items.filter((it) => ipFamilyOf(it.host));
  const weight = Math.max(1, Math.floor(100 / Math.max(1, items.length)));
  const records: Answer[] = [];
  const extra: Answer[] = [];
  const seenSrv = new Set<string>();
  const seenAddr = new Set<string>();
  for (const it of items) {
    if (it.port === -1) continue;
    const k = `${it.target}|${it.port}`;
    if (!seenSrv.has(k)) {
      seenSrv.add(k);
      records.push({ name: qname, type: 'SRV', class: 'IN', ttl: ctx.o.ttl,
        data: { priority: 0, weight, port: it.port, target: it.target } });
    }
    const a = `${it.target}|${it.host}`;
    if (!seenAddr.has(a)) {
      seenAddr.add(a);
      extra.push({ name: it.target, type: ipFamilyOf(it.host) === 'IPv6' ? 'AAAA' : 'A',
        class: 'IN', ttl: ctx.o.ttl, data: it.host });
    }
  }
  return { records, extra, nameError: false };
}

/** The zone's NS (`ns.dns.<zone>`) with its addresses as glue. */
function ns(ctx: Ctx, qname: string) {
  const target = `ns.dns.${ctx.o.zone}`;
  const addrs = ctx.o.nsAddresses?.(ctx.index) ?? [];
  if (!addrs.length) return { records: [], nameError: false };
  return {
    records: [{ name: qname, type: 'NS', class: 'IN', ttl: ctx.o.ttl, data: target } as Answer],
    extra: addrs.map((ip) => ({ name: target, type: ipFamilyOf(ip) === 'IPv6' ? 'AAAA' : 'A',
      class: 'IN', ttl: ctx.o.ttl, data: ip }) as Answer),
    nameError: false,
  };
}
