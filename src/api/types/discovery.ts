// discovery.k8s.io/v1 EndpointSlice, coordination.k8s.io/v1 Lease and
// networking.k8s.io/v1 ServiceCIDR, as upstream JSON.

import type { Condition, ObjectReference, TypedObject } from './meta.js';
import type { Protocol } from './pod.js';

export type AddressType = 'IPv4' | 'IPv6' | 'FQDN';

export interface EndpointConditions {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export interface EndpointHints {
  forZones?: Array<{ name: string }>;
  forNodes?: Array<{ name: string }>;
}

export interface Endpoint {
  addresses: string[];
  conditions?: EndpointConditions;
  hostname?: string;
  targetRef?: ObjectReference;
  deprecatedTopology?: Record<string, string>;
  nodeName?: string;
  zone?: string;
  hints?: EndpointHints;
}

export interface EndpointSlicePort {
  name?: string;
  protocol?: Protocol;
  port?: number;
  appProtocol?: string;
}

export interface EndpointSlice extends TypedObject {
  addressType: AddressType;
  endpoints: Endpoint[];
  ports?: EndpointSlicePort[];
}

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  /** metav1.MicroTime: RFC 3339 with microseconds (`2024-01-02T03:04:05.000000Z`). */
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  strategy?: string;
  preferredHolder?: string;
}

export interface Lease extends TypedObject {
  spec?: LeaseSpec;
}

export interface ServiceCIDRSpec {
  /** One CIDR, or two of different families; immutable. */
  cidrs?: string[];
}

export interface ServiceCIDR extends TypedObject {
  spec?: ServiceCIDRSpec;
  status?: { conditions?: Condition[] };
}
