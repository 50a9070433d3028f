// The DNS server's Prometheus metrics under CoreDNS's names and labels (plugin/metrics/vars):
// coredns_dns_requests_total{server,zone,view,proto,family,type},
// coredns_dns_responses_total{server,zone,view,rcode,plugin} and
// coredns_dns_request_duration_seconds{server,zone,view} with CoreDNS's buckets (0.25 ms × 2^n,
// 16 buckets). `zone` is the server block's zone (`.` in kubeadm's Corefile), `type` one of
// CoreDNS's monitored types or `other`.
//
// Counted in plain numbers on the hot path (a cached answer costs well under a microsecond
// here, and prom-client's per-call label hashing cost twice that) and handed to prom-client's
// registry as collected metrics, which renders them in the exposition format at scrape time.

import { Registry } from 'prom-client';

const TIME_BUCKETS = Array.from({ length: 16 }, (_, i) => 0.00025 * 2 ** i);
const MONITORED = new Set(['A', 'AAAA', 'NS', 'PTR', 'SOA', 'MX', 'TXT', 'CNAME', 'SRV',
  'NAPTR', 'DS', 'DNSKEY', 'RRSIG', 'NSEC', 'NSEC3', 'HINFO', 'TKEY', 'TSIG', 'IXFR', 'AXFR',
  'ANY', 'HTTPS', 'SVCB', 'CAA']);

export interface DnsMetrics {
  readonly registry: Registry;
  /** One answered (or refused) request. `plugin` is what wrote the reply (`kubernetes`,
   *  `forward`, '' for the server itself). */
  observe(r: { proto: 'udp' | 'tcp'; ipv6: boolean; type: string; rcode: string; plugin: string;
    seconds: number }): void;
}

interface Value {
  readonly labels: Record<string, string | number>;
  readonly value: number;
  readonly metricName?: string;
}

/** A metric prom-client's registry renders from what `values` returns at scrape time. */
function collected(name: string, help: string, type: 'counter' | 'histogram', values: () => Value[]) {
  return {
    name,
    async get() { return { name, help, type, values: values(), aggregator: 'sum' as const }; },
  };
}

export function buildDnsMetrics(server = 'dns://:53', zone = '.'): DnsMetrics {
  const registry = new Registry();
  const base = { server, zone, view: '' };
  const requests = new Map<string, { labels: Record<string, string>; n: number }>();
  const responses = new Map<string, { labels: Record<string, string>; n: number }>();
  const buckets = new Array<number>(TIME_BUCKETS.length + 1).fill(0);
  let sum = 0;
  let count = 0;
  registry.registerMetric(collected('coredns_dns_requests_total',
    'Counter of DNS requests made per zone, protocol and family.', 'counter',
    () => [...requests.values()].map((c) => ({ labels: c.labels, value: c.n }))) as never);
  registry.registerMetric(collected('coredns_dns_responses_total', 'Counter of response status codes.',
    'counter', () => [...responses.values()].map((c) => ({ labels: c.labels, value: c.n }))) as never);
  registry.registerMetric(collected('coredns_dns_request_duration_seconds',
    'Histogram of the time (in seconds) each request took per zone.', 'histogram', () => {
      const name = 'coredns_dns_request_duration_seconds';
      const out: Value[] = [];
      let acc = 0;
      TIME_BUCKETS.forEach((le, i) => {
        acc += buckets[i]!;
        out.push({ metricName: `${name}_bucket`, labels: { le, ...base }, value: acc });
      });
      out.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', ...base }, value: count });
      out.push({ metricName: `${name}_sum`, labels: base, value: sum });
      out.push({ metricName: `${name}_count`, labels: base, value: count });
      return out;
    }) as never);
  return {
    registry,
    observe(r) {
      const type = MONITORED.has(r.type) ? r.type : 'other';
      const family = r.ipv6 ? '2' : '1';
      const rk = `${r.proto}|${family}|${type}`;
      const req = requests.get(rk);
      if (req) req.n++;
      else requests.set(rk, { labels: { ...base, proto: r.proto, family, type }, n: 1 });
      const sk = `${r.rcode}|${r.plugin}`;
      const resp = responses.get(sk);
      if (resp) resp.n++;
      else responses.set(sk, { labels: { ...base, rcode: r.rcode, plugin: r.plugin }, n: 1 });
      let i = 0;
      while (i < TIME_BUCKETS.length && r.seconds > TIME_BUCKETS[i]!) i++;
      buckets[i]!++;
      sum += r.seconds;
      count++;
    },
  };
}
