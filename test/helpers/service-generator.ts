// A seeded generator of Services with EndpointSlices, for benchmarks and scale tests:
// `generateServices(n, {seed, endpointsPerService})` always returns the same objects.

import type { EndpointSlice, KubeObject, Service } from '../../src/api/types.js';

import { seededRng as seededRandom } from '../../src/scheduler/rng.js';

export { seededRandom };

export interface GeneratorOptions {
  readonly seed?: number;
  readonly endpointsPerService?: number;
  /** Nodes endpoints are spread over (`node-0` … ); node-0 is "this" node in benchmarks. */
  readonly nodes?: number;
}

const ip4 = (n: number) => `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

/** Service i: ClusterIP from 10.96.0.0/12; every 4th is a NodePort; endpoints in 10.244/16. */
export function generateService(i: number, rnd: () => number, opts: GeneratorOptions = {}):
  { service: Service; slice: EndpointSlice } {
  const eps = opts.endpointsPerService ?? 10;
  const nodes = opts.nodes ?? 50;
  const name = `svc-${i}`;
  const nodePort = i % 4 === 0 ? { nodePort: 30000 + (i % 2768) } : {};
  const service: Service = {
    apiVersion: 'v1', kind: 'Service', metadata: { namespace: `ns-${i % 20}`, name },
    spec: {
      type: nodePort.nodePort ? 'NodePort' : 'ClusterIP',
      clusterIP: ip4(((10 << 24) | (96 << 16)) + 10 + i),
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, ...nodePort }],
    },
  };
  const endpoints = Array.from({ length: eps }, () => {
    const host = Math.floor(rnd() * 65_000) + 2;
    return {
      addresses: [ip4(((10 << 24) | (244 << 16)) + host)],
      nodeName: `node-${Math.floor(rnd() * nodes)}`,
      conditions: { ready: true, serving: true, terminating: false },
    };
  });
  const slice: EndpointSlice = {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { namespace: `ns-${i % 20}`, name: `${name}-abcde`,
      labels: { 'kubernetes.io/service-name': name } },
    addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints,
  };
  return { service, slice };
}

export function generateServices(n: number, opts: GeneratorOptions = {}): KubeObject[] {
  const rnd = seededRandom(opts.seed ?? 1);
  const out: KubeObject[] = [];
  for (let i = 0; i < n; i++) {
    const { service, slice } = generateService(i, rnd, opts);
    out.push(service, slice);
  }
  return out;
}
