// `kdp verify`'s cluster DNS check. Two halves of every lookup a pod makes:
// - the path: from one pod on every node, UDP and TCP to each kube-dns ClusterIP port 53 are
//   delivered to a ready DNS pod (so the lookup is Service traffic through kube-proxy's rules);
// - the answer: every Service name, resolved by the DNS server's own code over the cluster's
//   records, gives its ClusterIPs — a headless Service exactly its ready endpoints' addresses —
//   computed here independently from the Service and EndpointSlice objects.

import type { EndpointSlice, Service } from '../api/types.js';
import type { ClusterDnsView } from '../dns/cluster-view.js';
import { resolveName } from '../dns/resolve.js';
import { traceResolved } from './cluster.js';
import { familyOf } from './packet.js';
import type { Topology, TracePodInfo } from './topology.js';
import { podSource, type VerifyCheck } from './verify.js';

export const DNS_SERVICE = { namespace: 'kube-system', name: 'kube-dns' } as const;

export interface DnsVerifyInput {
  readonly topo: Topology;
  readonly services: readonly Service[];
  readonly slices: readonly EndpointSlice[];
  readonly view: ClusterDnsView;
}

const sliceOf = (s: EndpointSlice) => s.metadata.labels?.['kubernetes.io/service-name'];

/** The addresses a headless Service's name answers with: its ready endpoints (every endpoint
 *  with publishNotReadyAddresses, unless `readyOnly`), de-duplicated. */
function headlessAddresses(svc: Service, slices: readonly EndpointSlice[], readyOnly = false): string[] {
  const out = new Set<string>();
  for (const sl of slices) {
    if (sl.metadata.namespace !== svc.metadata.namespace || sliceOf(sl) !== svc.metadata.name) continue;
    for (const e of sl.endpoints ?? []) {
      if (e.conditions?.ready === false && (readyOnly || !svc.spec?.publishNotReadyAddresses)) continue;
      for (const a of e.addresses ?? []) out.add(a);
    }
  }
  return [...out].sort();
}

function checkDnsPath(input: DnsVerifyInput): VerifyCheck {
  const c: VerifyCheck = { name: 'every node\'s pods reach the cluster DNS (kube-dns :53 UDP and TCP)',
    cases: 0, failures: [] };
  const dns = input.services.find((s) => s.metadata.namespace === DNS_SERVICE.namespace &&
    s.metadata.name === DNS_SERVICE.name);
  const ips = (dns?.spec?.clusterIPs ?? (dns?.spec?.clusterIP ? [dns.spec.clusterIP] : []))
    .filter((ip) => ip !== 'None');
  if (!ips.length) {
    c.failures.push({ what: 'kube-system/kube-dns', expected: 'a ClusterIP', got: 'no such Service' });
    return c;
  }
  const ready = new Set(headlessAddresses(dns!, input.slices, true));
  const reps = new Map<string, TracePodInfo>();
  for (const p of input.topo.pods) {
    const k = `${p.node}/${familyOf(p.ip)}`;
    if (!reps.has(k)) reps.set(k, p);
  }
  for (const from of reps.values()) {
    for (const ip of ips.filter((x) => familyOf(x) === familyOf(from.ip))) {
      for (const proto of ['udp', 'tcp'] as const) {
        c.cases++;
        const t = traceResolved(input.topo, podSource(from), { ip, port: 53, label: `kube-dns ${ip}:53` }, proto);
        const bad = t.result.verdict !== 'ACCEPT' ||
          t.result.destinations.some((d) => !ready.has(d.destination.replace(/^\[?(.*?)\]?:53$/, '$1')));
        if (bad) {
          c.failures.push({ what: `${from.name} (${from.node}) → ${ip}:53/${proto}`,
            expected: `a ready DNS pod (${[...ready].join(', ') || 'none ready'})`,
            got: `${t.result.verdict} ${t.result.destinations.map((d) => d.destination).join(', ')}`.trim(),
            trace: t });
        }
      }
    }
  }
  return c;
}

/** What a Service's name answers: its ClusterIPs, or (headless) its ready endpoints, sorted. */
export function expectedAddresses(svc: Service, slices: readonly EndpointSlice[]): string[] {
  return svc.spec?.clusterIP === 'None' ? headlessAddresses(svc, slices) :
    [...(svc.spec?.clusterIPs ?? (svc.spec?.clusterIP ? [svc.spec.clusterIP] : []))].sort();
}

function checkDnsAnswers(input: DnsVerifyInput): VerifyCheck {
  const c: VerifyCheck = { name: 'every Service name resolves to its ClusterIPs (headless: its ready endpoints)',
    cases: 0, failures: [] };
  const { zone } = input.view.config;
  for (const svc of input.services) {
    if (svc.spec?.type === 'ExternalName') continue;
    const ns = svc.metadata.namespace ?? 'default';
    const fqdn = `${svc.metadata.name}.${ns}.svc.${zone}`;
    const expected = expectedAddresses(svc, input.slices);
    c.cases++;
    const r = resolveName(input.view.index, `${fqdn}.`, { namespace: ns, answer: input.view.answer });
    const got = r ? [...r.ips].sort() : [];
    if (got.join(',') !== expected.join(',')) {
      c.failures.push({ what: fqdn, expected: expected.join(', ') || 'no address (NXDOMAIN or NODATA)',
        got: got.join(', ') || 'no address' });
    }
  }
  return c;
}

/** The DNS checks; one skipped check when the cluster runs no DNS addon. */
export function verifyClusterDns(input: DnsVerifyInput): VerifyCheck[] {
  if (!input.view.addon) {
    return [{ name: 'cluster DNS', cases: 0, failures: [], skipped: 'no DNS addon (kdp up --no-dns)' }];
  }
  return [checkDnsPath(input), checkDnsAnswers(input)];
}
