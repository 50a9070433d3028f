// Builders for Services and EndpointSlices in proxy tests.

import type { Endpoint, EndpointSlice, Service, ServiceSpec } from '../../src/api/types.js';

export function service(ns: string, name: string, spec: ServiceSpec,
  status?: Service['status']): Service {
  return {
    apiVersion: 'v1', kind: 'Service', metadata: { namespace: ns, name },
    spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }], ...spec },
    ...(status ? { status } : {}),
  };
}

export function slice(ns: string, svc: string, name: string, endpoints: Endpoint[],
  opts: { port?: number; portName?: string; family?: 'IPv4' | 'IPv6' } = {}): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { namespace: ns, name, labels: { 'kubernetes.io/service-name': svc } },
    addressType: opts.family ?? 'IPv4',
    ports: [{ name: opts.portName ?? 'http', port: opts.port ?? 8080, protocol: 'TCP' }],
    endpoints,
  };
}

export function ep(ip: string, nodeName?: string, conditions?: Endpoint['conditions'],
  extra: Partial<Endpoint> = {}): Endpoint {
  return { addresses: [ip], ...(nodeName ? { nodeName } : {}),
    ...(conditions ? { conditions } : {}), ...extra };
}
