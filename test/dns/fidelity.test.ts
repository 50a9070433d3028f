// The spec's examples (kubernetes/dns docs/specification.md §2, schema 1.1.0) as a table:
// each question, asked over UDP of the server on loopback, gets exactly these answer records
// and rcode. TTLs are CoreDNS's default (5; dns-version 28800); SRV priority/weight are
// CoreDNS's (0, 100 split evenly), which the spec leaves to the implementation.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDnsHandler, staticSource, type DnsHandler } from '../../src/dns/handler.js';
import { buildForwarder } from '../../src/dns/forward.js';
import { buildDnsIndex } from '../../src/dns/records.js';
import { listenDns, type DnsListener } from '../../src/dns/server.js';
import { lines, query } from './dns-client.js';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';
import { specCluster } from './fixtures.js';

const Z = 'cluster.local';
const K = `kubernetes.default.svc.${Z}`;
const H = `headless.default.svc.${Z}`;

let upstream: FakeUpstream;
let handler: DnsHandler;
let server: DnsListener;

beforeAll(async () => {
  upstream = await startFakeUpstream({
    'www.example.com A': [{ name: 'www.example.com', type: 'A', ttl: 28715, data: '192.0.2.53' }],
    'www.example.com AAAA': [{ name: 'www.example.com', type: 'AAAA', ttl: 28715, data: '2001:db8::53' }],
  });
  handler = buildDnsHandler({
    answer: { zone: Z, ttl: 5, pods: 'insecure', reverseZones: true },
    source: staticSource(buildDnsIndex(specCluster(), Z, 1700000000)),
    forwarder: buildForwarder({ upstreams: [{ host: '127.0.0.1', port: upstream.port }] }),
  });
  server = await listenDns(handler, { host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await server.close();
  handler.close();
  upstream.close();
});

type Row = [question: string, type: string, rcode: string, answers: string[]];

const SPEC: Row[] = [
  // §2.2 schema version
  [`dns-version.${Z}`, 'TXT', 'NOERROR', [`dns-version.${Z}. 28800 IN TXT "1.1.0"`]],
  // §2.3.1 ClusterIP A / AAAA
  [K, 'A', 'NOERROR', [`${K}. 5 IN A 10.3.0.1`]],
  [K, 'AAAA', 'NOERROR', [`${K}. 5 IN AAAA 2001:db8::1`]],
  // §2.3.2 SRV per named port (a dual-stack Service: one record, weight 100 split over 2 IPs)
  [`_https._tcp.${K}`, 'SRV', 'NOERROR', [`_https._tcp.${K}. 5 IN SRV 0 50 443 ${K}.`]],
  // §2.3.3 PTR, IPv4 and IPv6
  ['1.0.3.10.in-addr.arpa', 'PTR', 'NOERROR', [`1.0.3.10.in-addr.arpa. 5 IN PTR ${K}.`]],
  [`1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa`, 'PTR', 'NOERROR',
    [`1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa. 5 IN PTR ${K}.`]],
  // §2.4.1 headless: one A per ready endpoint, per hostname; the not-ready one is absent
  [H, 'A', 'NOERROR', [`${H}. 5 IN A 10.3.0.100`, `${H}. 5 IN A 10.3.0.101`, `${H}. 5 IN A 10.3.0.102`]],
  [`my-pet.${H}`, 'A', 'NOERROR', [`my-pet.${H}. 5 IN A 10.3.0.100`]],
  [H, 'AAAA', 'NOERROR', [`${H}. 5 IN AAAA 2001:db8::100`]],
  [`my-pet.${H}`, 'AAAA', 'NOERROR', [`my-pet.${H}. 5 IN AAAA 2001:db8::100`]],
  // the endpoint without hostname answers under CoreDNS's dashed-IP identifier
  [`10-3-0-102.${H}`, 'A', 'NOERROR', [`10-3-0-102.${H}. 5 IN A 10.3.0.102`]],
  // §2.4.2 headless SRV: N ready endpoints × M named ports (my-pet twice: v4 and v6, one SRV)
  [`_https._tcp.${H}`, 'SRV', 'NOERROR', [
    `_https._tcp.${H}. 5 IN SRV 0 25 443 10-3-0-102.${H}.`,
    `_https._tcp.${H}. 5 IN SRV 0 25 443 my-pet-2.${H}.`,
    `_https._tcp.${H}. 5 IN SRV 0 25 443 my-pet.${H}.`]],
  // §2.4.3 headless PTR
  ['100.0.3.10.in-addr.arpa', 'PTR', 'NOERROR', [`100.0.3.10.in-addr.arpa. 5 IN PTR my-pet.${H}.`]],
  ['0.0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa', 'PTR', 'NOERROR',
    ['0.0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa. 5 IN PTR ' +
      `my-pet.${H}.`]],
  // §2.5 ExternalName: CNAME, then the target's address from upstream
  [`foo.default.svc.${Z}`, 'A', 'NOERROR', [`foo.default.svc.${Z}. 5 IN CNAME www.example.com.`,
    'www.example.com. 28715 IN A 192.0.2.53']],
  [`foo.default.svc.${Z}`, 'AAAA', 'NOERROR', [`foo.default.svc.${Z}. 5 IN CNAME www.example.com.`,
    'www.example.com. 28715 IN AAAA 2001:db8::53']],
  [`foo.default.svc.${Z}`, 'CNAME', 'NOERROR', [`foo.default.svc.${Z}. 5 IN CNAME www.example.com.`]],
];

/** NXDOMAIN and NODATA (spec §2.4.1 and CoreDNS's kubernetes plugin). */
const NEGATIVE: Row[] = [
  // headless without ready endpoints: NXDOMAIN (spec §2.4.1)
  [`empty-headless.default.svc.${Z}`, 'A', 'NXDOMAIN', []],
  [`missing.default.svc.${Z}`, 'A', 'NXDOMAIN', []],
  [`web.nonexistent.svc.${Z}`, 'A', 'NXDOMAIN', []],
  [`not-ready.${H}`, 'A', 'NXDOMAIN', []],
  [`_nope._tcp.${K}`, 'SRV', 'NXDOMAIN', []],
  [`a.b.c.web.default.svc.${Z}`, 'A', 'NXDOMAIN', []],
  [`foo.${Z}`, 'A', 'NXDOMAIN', []],
  // the name exists without that type: NODATA
  [`v4only.other.svc.${Z}`, 'AAAA', 'NOERROR', []],
  [`v4only.other.svc.${Z}`, 'TXT', 'NOERROR', []],
  [`v4only.other.svc.${Z}`, 'MX', 'NOERROR', []],
  [`default.svc.${Z}`, 'A', 'NOERROR', []],
  [`svc.${Z}`, 'A', 'NOERROR', []],
  [Z, 'A', 'NOERROR', []],
  [K, 'PTR', 'NOERROR', []],
];

const MORE: Row[] = [
  // names are case-insensitive; the answer keeps the question's spelling
  [`KUBERNETES.Default.svc.Cluster.Local`, 'A', 'NOERROR',
    ['KUBERNETES.Default.svc.Cluster.Local. 5 IN A 10.3.0.1']],
  // pods insecure: any dashed IP in an existing namespace
  [`10-244-1-5.default.pod.${Z}`, 'A', 'NOERROR', [`10-244-1-5.default.pod.${Z}. 5 IN A 10.244.1.5`]],
  [`fd00-10-244--5.default.pod.${Z}`, 'AAAA', 'NOERROR',
    [`fd00-10-244--5.default.pod.${Z}. 5 IN AAAA fd00:10:244::5`]],
  [`10-244-1-5.nonexistent.pod.${Z}`, 'A', 'NXDOMAIN', []],
  [`not-an-ip.default.pod.${Z}`, 'A', 'NXDOMAIN', []],
  // endpoints of a ClusterIP Service by dashed IP (CoreDNS endpoint names)
  [`10-244-1-5.web.default.svc.${Z}`, 'A', 'NOERROR', [`10-244-1-5.web.default.svc.${Z}. 5 IN A 10.244.1.5`]],
  // the endpoints' PTR
  ['5.1.244.10.in-addr.arpa', 'PTR', 'NOERROR', [`5.1.244.10.in-addr.arpa. 5 IN PTR 10-244-1-5.web.default.svc.${Z}.`]],
  // SRV of a ClusterIP service without port labels: every port, unnamed ones too (CoreDNS)
  [`web.default.svc.${Z}`, 'SRV', 'NOERROR', [`web.default.svc.${Z}. 5 IN SRV 0 50 80 web.default.svc.${Z}.`,
    `web.default.svc.${Z}. 5 IN SRV 0 50 8125 web.default.svc.${Z}.`]],
  [`_http._tcp.web.default.svc.${Z}`, 'SRV', 'NOERROR',
    [`_http._tcp.web.default.svc.${Z}. 5 IN SRV 0 100 80 web.default.svc.${Z}.`]],
  // an ExternalName inside the zone is followed here
  [`inzone.default.svc.${Z}`, 'A', 'NOERROR', [`inzone.default.svc.${Z}. 5 IN CNAME web.default.svc.${Z}.`,
    `web.default.svc.${Z}. 5 IN A 10.3.0.20`]],
  // outside the cluster: forwarded as is
  ['www.example.com', 'A', 'NOERROR', ['www.example.com. 28715 IN A 192.0.2.53']],
  ['nowhere.example', 'A', 'NXDOMAIN', []],
  // reverse names the cluster does not know fall through to upstream (kubeadm's fallthrough)
  ['9.9.9.9.in-addr.arpa', 'PTR', 'NXDOMAIN', []],
];

describe('cluster DNS answers the spec\'s examples (loopback UDP)', () => {
  for (const [name, type, rcode, answers] of [...SPEC, ...NEGATIVE, ...MORE]) {
    it(`${name} ${type} → ${rcode} ${answers.length ? `${answers.length} record(s)` : 'no records'}`,
      async () => {
        const r = await query(server.port, name, type);
        expect(r.rcode).toBe(rcode);
        expect(lines(r.answers)).toEqual([...answers].sort());
      });
  }
});

describe('negative answers', () => {
  it('NXDOMAIN and NODATA are authoritative and carry the zone SOA (CoreDNS values)', async () => {
    for (const [name, rcode] of [[`missing.default.svc.${Z}`, 'NXDOMAIN'],
      [`v4only.other.svc.${Z}`, 'NOERROR']] as const) {
      const r = await query(server.port, name, 'AAAA');
      expect(r.rcode).toBe(rcode);
      expect(r.flag_aa).toBe(true);
      expect(lines(r.authorities)).toEqual([`${Z}. 5 IN SOA ns.dns.${Z}. hostmaster.${Z}. ` +
        '1700000000 7200 1800 86400 5']);
    }
  });

  it('SRV answers carry the targets\' addresses in the additional section', async () => {
    const r = await query(server.port, `_https._tcp.${H}`, 'SRV', { edns: 1232 });
    expect(r.flag_tc).toBe(false);
    expect(lines(r.additionals)).toEqual([`10-3-0-102.${H}. 5 IN A 10.3.0.102`,
      `my-pet-2.${H}. 5 IN A 10.3.0.101`, `my-pet.${H}. 5 IN A 10.3.0.100`,
      `my-pet.${H}. 5 IN AAAA 2001:db8::100`]);
  });

  it('without EDNS0 (512 bytes) the additional records are left out, without TC', async () => {
    const r = await query(server.port, `_https._tcp.${H}`, 'SRV');
    expect(r.flag_tc).toBe(false);
    expect(lines(r.answers)).toHaveLength(3);
    expect(lines(r.additionals)).toEqual([]);
  });

  it('answers are authoritative, echo RD and do not claim recursion', async () => {
    const r = await query(server.port, K, 'A');
    expect(r.flag_aa).toBe(true);
    expect(r.flag_rd).toBe(true);
    expect(r.flag_ra).toBe(false);
    expect(r.id).toBe(4242);
  });

  it('zone transfers are refused', async () => {
    const r = await query(server.port, Z, 'AXFR', { tcp: true });
    expect(r.rcode).toBe('REFUSED');
  });
});
