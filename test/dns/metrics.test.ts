// The DNS server's metrics under CoreDNS's names, labels and buckets, counted without
// prom-client on the hot path and rendered by its registry: exact lines, and promtool agrees.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildDnsMetrics } from '../../src/dns/metrics.js';

const PROMTOOL = '/usr/bin/promtool';

describe('DNS metrics', () => {
  it('counts requests by proto/family/type and responses by rcode/plugin, times in CoreDNS\'s buckets', async () => {
    const m = buildDnsMetrics('dns://:53');
    m.observe({ proto: 'udp', ipv6: false, type: 'A', rcode: 'NOERROR', plugin: 'kubernetes', seconds: 0.0001 });
    m.observe({ proto: 'udp', ipv6: false, type: 'A', rcode: 'NOERROR', plugin: 'kubernetes', seconds: 0.0002 });
    m.observe({ proto: 'tcp', ipv6: true, type: 'TYPE65280', rcode: 'NXDOMAIN', plugin: '', seconds: 0.003 });
    const text = await m.registry.metrics();
    const lines = text.split('\n');
    const L = 'server="dns://:53",zone=".",view=""';
    expect(lines).toContain(`coredns_dns_requests_total{${L},proto="udp",family="1",type="A"} 2`);
    expect(lines).toContain(`coredns_dns_requests_total{${L},proto="tcp",family="2",type="other"} 1`);
    expect(lines).toContain(`coredns_dns_responses_total{${L},rcode="NXDOMAIN",plugin=""} 1`);
    expect(lines).toContain(`coredns_dns_request_duration_seconds_bucket{le="0.00025",${L}} 2`);
    expect(lines).toContain(`coredns_dns_request_duration_seconds_bucket{le="0.002",${L}} 2`);
    expect(lines).toContain(`coredns_dns_request_duration_seconds_bucket{le="0.004",${L}} 3`);
    expect(lines).toContain(`coredns_dns_request_duration_seconds_bucket{le="+Inf",${L}} 3`);
    expect(lines).toContain(`coredns_dns_request_duration_seconds_count{${L}} 3`);
    expect(lines.filter((l) => l.startsWith('coredns_dns_request_duration_seconds_bucket'))).toHaveLength(17);
    if (existsSync(PROMTOOL) || process.env.CI === 'true') {
      execFileSync(PROMTOOL, ['check', 'metrics'], { input: text });
    }
  });
});
