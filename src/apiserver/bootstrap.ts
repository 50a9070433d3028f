// Objects every cluster starts with (created if missing, never overwritten): the four system
// namespaces, the `kubernetes` Service, the default ServiceCIDR, and the RBAC bootstrap policy.

import { isKdpError } from '../errors.js';
import type { KubeObject } from '../client/types.js';
import { bootstrapRbacObjects } from './authz/index.js';
import type { ApiService, Target } from './service.js';
import type { RequestContext } from './rest/deps.js';
import { parseApiVersion } from '../api/registry.js';
import { cidrList, ipFamilyOf } from '../api/net.js';

export interface BootstrapOptions {
  readonly serviceCIDR: string;
  /** First address of the service CIDR (the `kubernetes` Service's ClusterIP). */
  readonly apiServiceIP: string;
  /** Advertised address for the `kubernetes` Service's endpoints; none when absent (a
   *  loopback address is not a valid endpoint). */
  readonly endpointIP?: string;
  readonly endpointPort: number;
}

export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export function bootstrapObjects(o: BootstrapOptions): KubeObject[] {
  const ns = SYSTEM_NAMESPACES.map((name) => ({ apiVersion: 'v1', kind: 'Namespace',
    metadata: { name } }));
  const labels = { component: 'apiserver', provider: 'kubernetes' };
  const endpoints = o.endpointIP ? [
    { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'kubernetes', namespace: 'default',
      labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } },
      subsets: [{ addresses: [{ ip: o.endpointIP }],
        ports: [{ name: 'https', port: o.endpointPort, protocol: 'TCP' }] }] },
    { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
      metadata: { name: 'kubernetes', namespace: 'default',
        labels: { 'kubernetes.io/service-name': 'kubernetes' } },
      addressType: ipFamilyOf(o.endpointIP) ?? 'IPv4',
      endpoints: [{ addresses: [o.endpointIP], conditions: { ready: true } }],
      ports: [{ name: 'https', port: o.endpointPort, protocol: 'TCP' }] },
  ] : [];
  return [
    ...ns,
    { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'kubernetes' },
      spec: { cidrs: cidrList(o.serviceCIDR) } },
    { apiVersion: 'v1', kind: 'Service',
      metadata: { name: 'kubernetes', namespace: 'default', labels },
      spec: { type: 'ClusterIP', clusterIP: o.apiServiceIP, clusterIPs: [o.apiServiceIP],
        sessionAffinity: 'None',
        ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: o.endpointPort }] } },
    ...endpoints,
    ...bootstrapRbacObjects(),
  ];
}

function targetOf(svc: ApiService, o: KubeObject): Target {
  const { group, version } = parseApiVersion(o.apiVersion ?? '');
  const r = svc.catalog.all.find((x) => x.group === group && x.version === version &&
    x.kind === o.kind);
  if (!r) throw new Error(`bootstrap: no served resource for ${o.apiVersion} ${o.kind}`);
  return { group, version, resource: r.resource, namespace: o.metadata.namespace };
}

/** Creates each object unless it exists. Returns the number created. */
export async function ensureObjects(svc: ApiService, ctx: RequestContext, objs: KubeObject[]):
  Promise<number> {
  let n = 0;
  for (const o of objs) {
    const t = targetOf(svc, o);
    // Look first: admission (e.g. ClusterIP allocation) would reject a duplicate before the
    // store could answer AlreadyExists.
    try {
      await svc.get(ctx, { ...t, name: o.metadata.name });
      continue;
    } catch (e) {
      if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
    }
    try {
      await svc.create(ctx, t, structuredClone(o), { fieldManager: 'kdp-bootstrap' });
      n++;
    } catch (e) {
      if (!isKdpError(e, 'KDP_ALREADY_EXISTS')) throw e;
    }
  }
  return n;
}
