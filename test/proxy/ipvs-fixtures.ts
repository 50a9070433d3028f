// Builders for the ipvs semantics tests: a Service and its EndpointSlice as plain objects, and
// a pipeline over an ipvs proxier for node-a (172.18.0.2, pods 10.244.0.0/16).

import type { EndpointSlice, KubeObject, Service } from '../../src/api/types.js';
import type { SyncResult } from '../../src/proxy/backend.js';
import { compileConfigs, feedObjects } from '../../src/proxy/compile.js';
import {
  buildProxier, type IpvsHostOptions, type IpvsProxier,
} from '../../src/proxy/ipvs/proxier.js';
import { ProxyPipeline } from '../../src/proxy/pipeline.js';
import { parseIpvsState, type IpvsState } from '../../src/ruleset/ipvs/index.js';
import { canonicalize } from '../../src/proxy/ipvs/proxier.js';

export interface EndpointSpec {
  readonly ip: string;
  readonly node?: string;
  readonly ready?: boolean;
  readonly serving?: boolean;
  readonly terminating?: boolean;
}

export function service(name: string, spec: Record<string, unknown>,
  status?: Record<string, unknown>): Service {
  return {
    apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'ns', name },
    spec: {
      type: 'ClusterIP',
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }],
      ...spec,
    },
    ...(status ? { status } : {}),
  } as Service;
}

export function slice(svc: string, eps: readonly EndpointSpec[], protocol = 'TCP',
  port = 8080): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { namespace: 'ns', name: `${svc}-1`, labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port, protocol }],
    endpoints: eps.map((e) => ({
      addresses: [e.ip], nodeName: e.node ?? 'node-b',
      conditions: { ready: e.ready ?? true, serving: e.serving ?? e.ready ?? true,
        terminating: e.terminating ?? false },
    })),
  } as EndpointSlice;
}

export const CONFIG = [
  'apiVersion: kubeproxy.config.k8s.io/v1alpha1',
  'kind: KubeProxyConfiguration',
  'mode: ipvs',
  'clusterCIDR: 10.244.0.0/16',
  '',
].join('\n');

export function ipvsPipeline(objects: readonly KubeObject[], configText = CONFIG,
  host: IpvsHostOptions = {}): { pipeline: ProxyPipeline; proxier: IpvsProxier } {
  const config = compileConfigs({
    objects, configText, mode: 'ipvs', nodeName: 'node-a', nodeIPs: ['172.18.0.2'],
  })[0]!;
  const proxier = buildProxier(config, host);
  const pipeline = new ProxyPipeline(proxier);
  feedObjects(pipeline, objects);
  return { pipeline, proxier };
}

/** The whole state a sync describes, parsed back through the ipvs.golden format. */
export function stateOf(result: SyncResult): IpvsState {
  return parseIpvsState(result.artifacts.map(canonicalize).join(''));
}

/** Real servers of one virtual server as `ip:port w=N`. */
export function realsOf(state: IpvsState, vsAddress: string): string[] {
  const vs = state.ipvs.virtualServers.find((v) => `${v.address}:${v.port}` === vsAddress);
  if (vs === undefined) throw new Error(`no virtual server ${vsAddress}`);
  return vs.realServers.map((r) => `${r.address}:${r.port} w=${r.weight}`);
}

export function entriesOf(state: IpvsState, set: string): string[] {
  return state.ipsets.find((s) => s.name === set)?.entries.map((e) => e.value) ?? [];
}
