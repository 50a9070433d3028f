// verify's DNS answer check compares what the DNS server's code answers with what the objects
// say, computed independently: a stale or wrong record is a failure naming the name.

import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Service } from '../../src/api/types.js';
import { answerOptionsOf } from '../../src/dns/cluster-view.js';
import { DEFAULT_SERVE_CONFIG } from '../../src/dns/corefile.js';
import { buildDnsIndex } from '../../src/dns/records.js';
import type { Topology } from '../../src/trace/topology.js';
import { verifyClusterDns } from '../../src/trace/verify-dns.js';

const svc = (name: string, clusterIP: string): Service => ({ apiVersion: 'v1', kind: 'Service',
  metadata: { name, namespace: 'default' }, spec: { clusterIP, clusterIPs: clusterIP === 'None' ? undefined : [clusterIP],
    ports: [{ port: 80 }] } } as Service);
const slice = (service: string, eps: [string, boolean][]): EndpointSlice => ({ apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice', addressType: 'IPv4', metadata: { name: `${service}-x`, namespace: 'default',
    labels: { 'kubernetes.io/service-name': service } }, ports: [{ port: 80 }],
  endpoints: eps.map(([ip, ready]) => ({ addresses: [ip], conditions: { ready } })) } as EndpointSlice);

function run(services: Service[], slices: EndpointSlice[], recordsFrom = { services, slices }) {
  const view = { config: DEFAULT_SERVE_CONFIG, answer: answerOptionsOf(DEFAULT_SERVE_CONFIG), addon: true,
    index: buildDnsIndex({ services: recordsFrom.services, endpointSlices: recordsFrom.slices,
      namespaces: [{ metadata: { name: 'default' } }] }) };
  const checks = verifyClusterDns({ topo: { pods: [] } as unknown as Topology, services, slices, view });
  return checks.find((c) => c.name.startsWith('every Service name'))!;
}

describe('verify: DNS answers', () => {
  const services = [svc('web', '10.96.5.5'), svc('db', 'None')];
  const slices = [slice('db', [['10.244.1.7', true], ['10.244.2.9', false]])];

  it('ClusterIP and headless names agree with the objects (not-ready endpoints left out)', () => {
    expect(run(services, slices)).toMatchObject({ cases: 2, failures: [] });
  });

  it('records that lag the objects are failures naming the name', () => {
    const c = run(services, slices, { services: [svc('web', '10.96.9.9'), svc('db', 'None')], slices: [] });
    expect(c.failures).toEqual([
      { what: 'web.default.svc.cluster.local', expected: '10.96.5.5', got: '10.96.9.9' },
      { what: 'db.default.svc.cluster.local', expected: '10.244.1.7', got: 'no address' },
    ]);
  });

  it('no addon: one skipped check', () => {
    const view = { config: DEFAULT_SERVE_CONFIG, answer: answerOptionsOf(DEFAULT_SERVE_CONFIG), addon: false,
      index: buildDnsIndex({ services: [], endpointSlices: [], namespaces: [] }) };
    expect(verifyClusterDns({ topo: { pods: [] } as unknown as Topology, services: [], slices: [], view }))
      .toEqual([{ name: 'cluster DNS', cases: 0, failures: [], skipped: 'no DNS addon (kdp up --no-dns)' }]);
  });
});
