// The DNS server's Prometheus metrics under CoreDNS's names and labels (plugin/metrics/vars):
// coredns_dns_requests_total{server,zone,view,proto,family,type},
// coredns_dns_responses_total{server,zone,view,rcode,plugin} and
// coredns_dns_request_duration_seconds{server,zone,view} with CoreDNS's buckets (0.25 ms × 2^n,
// 16 buckets). `zone` is the server block's zone (`.` in kubeadm's Corefile), `type` one of
// CoreDNS's monitored types or `other`.

import { Counter, Histogram, Registry } from 'prom-client';

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

export function buildDnsMetrics(server = 'dns://:53', zone = '.'): DnsMetrics {
  const registry = new Registry();
  const requests = new Counter({ name: 'coredns_dns_requests_total',
    help: 'Counter of DNS requests made per zone, protocol and family.',
    labelNames: ['server', 'zone', 'view', 'proto', 'family', 'type'], registers: [registry] });
  const responses = new Counter({ name: 'coredns_dns_responses_total',
    help: 'Counter of response status codes.',
    labelNames: ['server', 'zone', 'view', 'rcode', 'plugin'], registers: [registry] });
  const duration = new Histogram({ name: 'coredns_dns_request_duration_seconds',
    help: 'Histogram of the time (in seconds) each request took per zone.',
    labelNames: ['server', 'zone', 'view'], buckets: TIME_BUCKETS, registers: [registry] });
  // Children per label set, made once: the hot path does no label hashing.
  const reqChildren = new Map<string, ReturnType<typeof requests.labels>>();
  const respChildren = new Map<string, ReturnType<typeof responses.labels>>();
  const durationChild = duration.labels(server, zone, '');
  return {
    registry,
    observe(r) {
      const type = MONITORED.has(r.type) ? r.type : 'other';
      const family = r.ipv6 ? '2' : '1';
      const rk = `${r.proto}|${family}|${type}`;
      let req = reqChildren.get(rk);
      if (!req) reqChildren.set(rk, req = requests.labels(server, zone, '', r.proto, family, type));
      req.inc();
      const sk = `${r.rcode}|${r.plugin}`;
      let resp = respChildren.get(sk);
      if (!resp) respChildren.set(sk, resp = responses.labels(server, zone, '', r.rcode, r.plugin));
      resp.inc();
      durationChild.observe(r.seconds);
    },
  };
}
