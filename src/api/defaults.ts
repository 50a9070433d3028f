// Defaulting: fills unset fields exactly as upstream's SetObjectDefaults_* for each kind
// (v1.33), mutating the object in place. The API server calls `applyDefaults` on every create
// and update body before validation; `kdp rules compile` calls it on offline input so the
// compilers see what a real cluster would store. Kinds without defaults pass through.

import type { KubeObject } from './object.js';
import type { Namespace } from './types.js';
import {
  defaultBinding, defaultEndpointSlice, defaultNamespace, defaultNode, defaultSecret,
  prepareNamespaceForCreate,
} from './defaults/misc.js';
import { defaultPod } from './defaults/pod.js';
import { defaultEndpoints, defaultService } from './defaults/service.js';
import {
  defaultDaemonSet, defaultDeployment, defaultJob, defaultReplicaSet,
} from './defaults/workloads.js';
import { defaultCronJob, defaultStatefulSet } from './defaults/statefulset-cronjob.js';
import { defaultNetworkPolicy } from '../netpol/defaults.js';

export { defaultCronJob, defaultStatefulSet } from './defaults/statefulset-cronjob.js';
export { defaultContainer, defaultPod, defaultPodSpec, defaultPodTemplate, imageTag }
  from './defaults/pod.js';
export {
  carryAllocatedServiceValues, defaultEndpoints, defaultService, isExternallyAccessible,
  normalizeClusterIPs,
} from './defaults/service.js';
export {
  JOB_LABELS, defaultDaemonSet, defaultDeployment, defaultJob, defaultReplicaSet,
  generateJobSelector,
} from './defaults/workloads.js';
export {
  NAMESPACE_NAME_LABEL, defaultBinding, defaultEndpointSlice, defaultNamespace, defaultNode,
  defaultSecret, prepareNamespaceForCreate,
} from './defaults/misc.js';

type Defaulter = (o: never) => void;

const DEFAULTERS: Record<string, Defaulter> = {
  'v1|Pod': defaultPod,
  'v1|Service': defaultService,
  'v1|Endpoints': defaultEndpoints,
  'v1|Namespace': defaultNamespace,
  'v1|Node': defaultNode,
  'v1|Secret': defaultSecret,
  'apps/v1|Deployment': defaultDeployment,
  'apps/v1|ReplicaSet': defaultReplicaSet,
  'apps/v1|DaemonSet': defaultDaemonSet,
  'batch/v1|Job': defaultJob,
  'apps/v1|StatefulSet': defaultStatefulSet,
  'batch/v1|CronJob': defaultCronJob,
  'discovery.k8s.io/v1|EndpointSlice': defaultEndpointSlice,
  'networking.k8s.io/v1|NetworkPolicy': defaultNetworkPolicy,
  'rbac.authorization.k8s.io/v1|RoleBinding': defaultBinding,
  'rbac.authorization.k8s.io/v1|ClusterRoleBinding': defaultBinding,
};

export interface DefaultOptions {
  /** Also apply create-time strategy defaults (Namespace finalizer and phase). */
  readonly onCreate?: boolean;
}

/**
 * Applies upstream defaults to `obj` in place (by its apiVersion and kind) and returns it.
 * Idempotent: defaulting a defaulted object changes nothing.
 */
export function applyDefaults<T extends KubeObject>(obj: T, opts: DefaultOptions = {}): T {
  const key = `${obj.apiVersion ?? ''}|${obj.kind ?? ''}`;
  const fn = DEFAULTERS[key] as ((o: KubeObject) => void) | undefined;
  if (fn) fn(obj);
  if (opts.onCreate && key === 'v1|Namespace') prepareNamespaceForCreate(obj as Namespace);
  return obj;
}
