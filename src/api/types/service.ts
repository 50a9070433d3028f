// core/v1 Service and Endpoints, as upstream JSON.

import type { Condition, IntOrString, ObjectReference, TypedObject } from './meta.js';
import type { Protocol } from './pod.js';

export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
export type IPFamily = 'IPv4' | 'IPv6';
export type IPFamilyPolicy = 'SingleStack' | 'PreferDualStack' | 'RequireDualStack';
export type TrafficPolicy = 'Cluster' | 'Local';
export type SessionAffinity = 'None' | 'ClientIP';

export interface ServicePort {
  name?: string;
  protocol?: Protocol;
  appProtocol?: string;
  port: number;
  targetPort?: IntOrString;
  nodePort?: number;
}

export interface SessionAffinityConfig {
  clientIP?: { timeoutSeconds?: number };
}

export interface ServiceSpec {
  ports?: ServicePort[];
  selector?: Record<string, string>;
  /** '' | 'None' (headless) | an IP. Set by the API server on create when empty. */
  clusterIP?: string;
  clusterIPs?: string[];
  type?: ServiceType;
  externalIPs?: string[];
  sessionAffinity?: SessionAffinity;
  loadBalancerIP?: string;
  loadBalancerSourceRanges?: string[];
  externalName?: string;
  externalTrafficPolicy?: TrafficPolicy;
  healthCheckNodePort?: number;
  publishNotReadyAddresses?: boolean;
  sessionAffinityConfig?: SessionAffinityConfig;
  ipFamilies?: IPFamily[];
  ipFamilyPolicy?: IPFamilyPolicy;
  allocateLoadBalancerNodePorts?: boolean;
  loadBalancerClass?: string;
  internalTrafficPolicy?: TrafficPolicy;
  trafficDistribution?: string;
}

export interface PortStatus {
  port: number;
  protocol: Protocol;
  error?: string;
}

export interface LoadBalancerIngress {
  ip?: string;
  hostname?: string;
  ipMode?: 'VIP' | 'Proxy';
  ports?: PortStatus[];
}

export interface ServiceStatus {
  loadBalancer?: { ingress?: LoadBalancerIngress[] };
  conditions?: Condition[];
}

export interface Service extends TypedObject {
  spec?: ServiceSpec;
  status?: ServiceStatus;
}

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

export interface EndpointPort {
  name?: string;
  port: number;
  protocol?: Protocol;
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

/** core/v1 Endpoints (deprecated upstream in favour of EndpointSlice, still served). */
export interface Endpoints extends TypedObject {
  subsets?: EndpointSubset[];
}
