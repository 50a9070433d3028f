// Resource references the controllers use (core/v1, apps/v1, discovery/v1, ...).

import type { ResourceRef } from '../client/types.js';

export const PODS = { group: '', version: 'v1', resource: 'pods' } as const;
export const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
export const SERVICES = { group: '', version: 'v1', resource: 'services' } as const;
export const ENDPOINTS = { group: '', version: 'v1', resource: 'endpoints' } as const;
export const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' } as const;
export const EVENTS = { group: '', version: 'v1', resource: 'events' } as const;
export const REPLICASETS = { group: 'apps', version: 'v1', resource: 'replicasets' } as const;
export const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments' } as const;
export const JOBS = { group: 'batch', version: 'v1', resource: 'jobs' } as const;
export const ENDPOINTSLICES =
  { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' } as const;
export const LEASES = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' } as const;

export function inNs(ref: ResourceRef, namespace: string | undefined): ResourceRef {
  return { ...ref, namespace };
}
