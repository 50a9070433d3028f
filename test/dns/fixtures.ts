// The cluster of the spec's examples (kubernetes/dns docs/specification.md §2): the
// `kubernetes` Service (10.3.0.1 and 2001:db8::1, port https 443), a headless Service with a
// ready endpoint per hostname (my-pet, my-pet-2) and one without hostname, an ExternalName
// `foo` → www.example.com, plus a ClusterIP `web` with a named and an unnamed port, a headless
// Service without ready endpoints, and an IPv4-only Service for NODATA.

import type { EndpointSlice } from '../../src/api/types/discovery.js';
import type { Service } from '../../src/api/types/service.js';
import type { KubeObject } from '../../src/client/types.js';
import type { DnsObjects } from '../../src/dns/records.js';

export function svc(ns: string, name: string, spec: Record<string, unknown>): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns }, spec } as Service;
}

export function slice(ns: string, svcName: string, name: string, addressType: 'IPv4' | 'IPv6',
  endpoints: Array<{ ip: string; hostname?: string; ready?: boolean }>,
  ports: Array<{ name?: string; port: number; protocol?: string }>): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name, namespace: ns, labels: { 'kubernetes.io/service-name': svcName } },
    addressType,
    endpoints: endpoints.map((e) => ({ addresses: [e.ip], ...(e.hostname ? { hostname: e.hostname } : {}),
      conditions: { ready: e.ready ?? true } })),
    ports: ports.map((p) => ({ name: p.name ?? '', port: p.port, protocol: p.protocol ?? 'TCP' })),
  } as EndpointSlice;
}

const ns = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

export function specCluster(): DnsObjects {
  return {
    namespaces: [ns('default'), ns('kube-system'), ns('other')],
    services: [
      svc('default', 'kubernetes', { clusterIP: '10.3.0.1', clusterIPs: ['10.3.0.1', '2001:db8::1'],
        ports: [{ name: 'https', port: 443, protocol: 'TCP' }] }),
      svc('default', 'headless', { clusterIP: 'None', clusterIPs: ['None'],
        ports: [{ name: 'https', port: 443, protocol: 'TCP' }] }),
      svc('default', 'foo', { type: 'ExternalName', externalName: 'www.example.com' }),
      svc('default', 'web', { clusterIP: '10.3.0.20', ports: [
        { name: 'http', port: 80, protocol: 'TCP' }, { port: 8125, protocol: 'UDP' }] }),
      svc('default', 'empty-headless', { clusterIP: 'None', ports: [{ name: 'http', port: 80 }] }),
      svc('other', 'v4only', { clusterIP: '10.3.0.30', ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] }),
      svc('default', 'inzone', { type: 'ExternalName', externalName: 'web.default.svc.cluster.local' }),
    ],
    endpointSlices: [
      slice('default', 'headless', 'headless-v4', 'IPv4', [
        { ip: '10.3.0.100', hostname: 'my-pet' }, { ip: '10.3.0.101', hostname: 'my-pet-2' },
        { ip: '10.3.0.102' }, { ip: '10.3.0.103', hostname: 'not-ready', ready: false }],
      [{ name: 'https', port: 443 }]),
      slice('default', 'headless', 'headless-v6', 'IPv6', [
        { ip: '2001:db8::100', hostname: 'my-pet' }], [{ name: 'https', port: 443 }]),
      slice('default', 'web', 'web-1', 'IPv4', [{ ip: '10.244.1.5' }, { ip: '10.244.2.7' }],
        [{ name: 'http', port: 8080 }, { port: 8125, protocol: 'UDP' }]),
      slice('default', 'empty-headless', 'empty-1', 'IPv4', [{ ip: '10.244.1.9', ready: false }],
        [{ name: 'http', port: 80 }]),
    ],
  };
}
