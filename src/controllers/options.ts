// Controller-manager configuration: defaults as upstream (kube-controller-manager ~v1.33), every
// duration in milliseconds and multiplied by `timeScale`, so tests and demos can run a node
// failure timeline in seconds.

import { parseServiceCIDRs } from '../api/service-cidr.js';
import type { InformerFactory } from '../client/informer.js';
import type { Client } from '../client/types.js';
import type { EventRecorder } from '../client/events.js';
import { parseClusterCIDRs } from './nodeipam/cluster-cidrs.js';
import { DEFAULT_LB_CIDR, parseCloudProvider, parseLbCidrs } from './service-lb/pool.js';
import type { CloudInstances, CloudRoutes } from './route/cloud.js';

export interface ControllerOptions {
  /** Multiplies every duration below. Default 1. */
  readonly timeScale?: number;
  /** Workers per controller. Default 4. */
  readonly workers?: number;
  /** Controllers to run; default all (`replicaset`, `deployment`, `endpointslice`, `endpoints`,
   * `nodeipam`, `nodelifecycle`, `taint-eviction`, `job`, `statefulset`, `cronjob`, `namespace`, `gc`,
   * `serviceaccount`, `root-ca-certificate-publisher`, `disruption`, `service-lb`, `route`,
   * `cloud-node-lifecycle`, `tokencleaner`, `bootstrapsigner`, `csrapproving`, `csrsigning`). */
  readonly controllers?: readonly string[];
  /** `--cluster-cidr`: one CIDR, or two of different families (dual stack), comma-separated;
   *  nodes' podCIDRs follow this order. Default 10.244.0.0/16. */
  readonly clusterCIDR?: string;
  /** Single stack only (upstream rejects it with two cluster CIDRs). */
  readonly nodeCIDRMaskSize?: number;
  /** Defaults /24 and /64. */
  readonly nodeCIDRMaskSizeIPv4?: number;
  readonly nodeCIDRMaskSizeIPv6?: number;
  /** Kept out of node CIDRs (upstream occupies each service CIDR in every cluster CIDR it
   *  overlaps). One CIDR or a comma-separated pair. */
  readonly serviceCIDR?: string;
  readonly nodeMonitorPeriodMs?: number;
  readonly nodeMonitorGracePeriodMs?: number;
  readonly burstReplicas?: number;
  readonly maxEndpointsPerSlice?: number;
  /** Delay that batches pod changes into one Endpoints/EndpointSlice sync (upstream
   * --endpoint-updates-batch-period / --endpointslice-updates-batch-period). Default 0. */
  readonly endpointUpdatesBatchPeriodMs?: number;
  /** Record Events (default true). */
  readonly events?: boolean;
  readonly now?: () => number;
  /** The cluster CA (PEM) the root CA publisher puts into every namespace's `kube-root-ca.crt`
   *  (upstream --root-ca-file, default the kubeconfig's CA); absent: nothing is published. */
  readonly rootCaPem?: string;
  /** `--cloud-provider`: `kdp` (default: the lab cloud's LoadBalancer service controller) or
   *  `none` (LoadBalancer Services stay pending, as without a cloud-controller-manager). */
  readonly cloudProvider?: 'kdp' | 'none';
  /** `--lb-cidr`: the LoadBalancer address pool, one CIDR per family; default 172.18.255.200/29. */
  readonly lbCIDR?: string;
  /** `--cluster-signing-cert-file`/`-key-file`: the CA csrsigning signs with; absent: approved
   *  CSRs stay unsigned. */
  readonly clusterSigning?: { readonly certPem: string; readonly keyPem: string };
  /** `--cluster-signing-duration` (ms, not scaled); default one year. */
  readonly clusterSigningDurationMs?: number;
  /** The lab cloud's route table and instances (route and cloud node lifecycle controllers);
   *  absent: those controllers do not run. */
  readonly cloud?: { readonly routes?: CloudRoutes; readonly instances?: CloudInstances };
}

export interface ResolvedControllerOptions {
  readonly timeScale: number;
  readonly workers: number;
  readonly controllers: ReadonlySet<string>;
  /** Canonical, in flag order. */
  readonly clusterCIDRs: readonly string[];
  /** Node mask size per cluster CIDR, same order. */
  readonly nodeCIDRMaskSizes: readonly number[];
  readonly serviceCIDRs: readonly string[];
  readonly nodeMonitorPeriodMs: number;
  readonly nodeMonitorGracePeriodMs: number;
  readonly burstReplicas: number;
  readonly maxEndpointsPerSlice: number;
  readonly endpointUpdatesBatchPeriodMs: number;
  readonly events: boolean;
  readonly now: () => number;
  readonly rootCaPem?: string;
  readonly cloudProvider: 'kdp' | 'none';
  readonly lbCIDRs: readonly string[];
  readonly clusterSigning?: { readonly certPem: string; readonly keyPem: string };
  readonly clusterSigningDurationMs: number;
  readonly cloud?: { readonly routes?: CloudRoutes; readonly instances?: CloudInstances };
  /** Scales a duration (ms) by timeScale. */
  scaled(ms: number): number;
}

export const ALL_CONTROLLERS = ['replicaset', 'deployment', 'daemonset', 'endpointslice', 'endpoints',
  'nodeipam', 'nodelifecycle', 'taint-eviction', 'job', 'statefulset', 'cronjob', 'namespace', 'gc',
  'serviceaccount', 'root-ca-certificate-publisher', 'disruption', 'service-lb', 'route',
  'cloud-node-lifecycle', 'tokencleaner', 'bootstrapsigner', 'csrapproving', 'csrsigning'] as const;

export function resolveControllerOptions(o: ControllerOptions = {}): ResolvedControllerOptions {
  const timeScale = o.timeScale ?? 1;
  const cidrs = parseClusterCIDRs(o.clusterCIDR ?? '10.244.0.0/16', o);
  return {
    timeScale,
    workers: o.workers ?? 4,
    controllers: new Set(o.controllers ?? ALL_CONTROLLERS),
    clusterCIDRs: cidrs.cidrs,
    nodeCIDRMaskSizes: cidrs.nodeMasks,
    serviceCIDRs: parseServiceCIDRs(o.serviceCIDR ?? '10.96.0.0/12'),
    nodeMonitorPeriodMs: (o.nodeMonitorPeriodMs ?? 5_000) * timeScale,
    nodeMonitorGracePeriodMs: (o.nodeMonitorGracePeriodMs ?? 50_000) * timeScale,
    burstReplicas: o.burstReplicas ?? 500,
    maxEndpointsPerSlice: o.maxEndpointsPerSlice ?? 100,
    endpointUpdatesBatchPeriodMs: (o.endpointUpdatesBatchPeriodMs ?? 0) * timeScale,
    events: o.events ?? true,
    now: o.now ?? Date.now,
    rootCaPem: o.rootCaPem,
    cloudProvider: parseCloudProvider(o.cloudProvider),
    lbCIDRs: parseLbCidrs(o.lbCIDR ?? DEFAULT_LB_CIDR),
    clusterSigning: o.clusterSigning,
    clusterSigningDurationMs: o.clusterSigningDurationMs ?? 365 * 86_400_000,
    ...(o.cloud ? { cloud: o.cloud } : {}),
    scaled: (ms) => ms * timeScale,
  };
}

/** What each controller is built from. */
export interface ControllerContext {
  readonly client: Client;
  readonly informers: InformerFactory;
  readonly options: ResolvedControllerOptions;
  recorder(component: string): EventRecorder;
}
