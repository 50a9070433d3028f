// apps/v1 Deployment, ReplicaSet, DaemonSet and batch/v1 Job, as upstream JSON.

import type { IntOrString, LabelSelector, ObjectMeta, TypedObject } from './meta.js';
import type { PodTemplateSpec } from './pod.js';

export interface WorkloadCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string;
  reason?: string;
  message?: string;
}

export interface RollingUpdateDeployment {
  maxUnavailable?: IntOrString;
  maxSurge?: IntOrString;
}

export interface DeploymentStrategy {
  type?: 'Recreate' | 'RollingUpdate';
  rollingUpdate?: RollingUpdateDeployment;
}

export interface DeploymentSpec {
  replicas?: number;
  selector: LabelSelector;
  template: PodTemplateSpec;
  strategy?: DeploymentStrategy;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  paused?: boolean;
  progressDeadlineSeconds?: number;
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  terminatingReplicas?: number;
  conditions?: WorkloadCondition[];
  collisionCount?: number;
}

export interface Deployment extends TypedObject {
  spec?: DeploymentSpec;
  status?: DeploymentStatus;
}

export interface ReplicaSetSpec {
  replicas?: number;
  minReadySeconds?: number;
  selector: LabelSelector;
  template?: PodTemplateSpec;
}

export interface ReplicaSetStatus {
  replicas: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  terminatingReplicas?: number;
  observedGeneration?: number;
  conditions?: WorkloadCondition[];
}

export interface ReplicaSet extends TypedObject {
  spec?: ReplicaSetSpec;
  status?: ReplicaSetStatus;
}

export interface DaemonSetUpdateStrategy {
  type?: 'RollingUpdate' | 'OnDelete';
  rollingUpdate?: { maxUnavailable?: IntOrString; maxSurge?: IntOrString };
}

export interface DaemonSetSpec {
  selector: LabelSelector;
  template: PodTemplateSpec;
  updateStrategy?: DaemonSetUpdateStrategy;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
}

export interface DaemonSetStatus {
  currentNumberScheduled: number;
  numberMisscheduled: number;
  desiredNumberScheduled: number;
  numberReady: number;
  observedGeneration?: number;
  updatedNumberScheduled?: number;
  numberAvailable?: number;
  numberUnavailable?: number;
  collisionCount?: number;
  conditions?: WorkloadCondition[];
}

export interface DaemonSet extends TypedObject {
  spec?: DaemonSetSpec;
  status?: DaemonSetStatus;
}

/** autoscaling/v1 Scale (the deployments/scale and replicasets/scale subresource body). */
export interface Scale extends TypedObject {
  spec?: { replicas?: number };
  status?: { replicas: number; selector?: string };
}

export interface JobSpec {
  parallelism?: number;
  completions?: number;
  activeDeadlineSeconds?: number;
  podFailurePolicy?: Record<string, unknown>;
  successPolicy?: Record<string, unknown>;
  backoffLimit?: number;
  backoffLimitPerIndex?: number;
  maxFailedIndexes?: number;
  selector?: LabelSelector;
  manualSelector?: boolean;
  template: PodTemplateSpec;
  ttlSecondsAfterFinished?: number;
  completionMode?: 'NonIndexed' | 'Indexed';
  suspend?: boolean;
  podReplacementPolicy?: 'TerminatingOrFailed' | 'Failed';
  managedBy?: string;
}

export interface JobStatus {
  conditions?: WorkloadCondition[];
  startTime?: string;
  completionTime?: string;
  active?: number;
  succeeded?: number;
  failed?: number;
  terminating?: number;
  completedIndexes?: string;
  failedIndexes?: string;
  uncountedTerminatedPods?: { succeeded?: string[]; failed?: string[] };
  ready?: number;
}

export interface Job extends TypedObject {
  spec?: JobSpec;
  status?: JobStatus;
}

export interface StatefulSetUpdateStrategy {
  type?: 'RollingUpdate' | 'OnDelete';
  rollingUpdate?: { partition?: number; maxUnavailable?: IntOrString };
}

export interface StatefulSetSpec {
  replicas?: number;
  selector: LabelSelector;
  template: PodTemplateSpec;
  volumeClaimTemplates?: Array<Record<string, unknown>>;
  serviceName?: string;
  podManagementPolicy?: 'OrderedReady' | 'Parallel';
  updateStrategy?: StatefulSetUpdateStrategy;
  revisionHistoryLimit?: number;
  minReadySeconds?: number;
  persistentVolumeClaimRetentionPolicy?: { whenDeleted?: string; whenScaled?: string };
  ordinals?: { start?: number };
}

export interface StatefulSetStatus {
  observedGeneration?: number;
  replicas: number;
  readyReplicas?: number;
  currentReplicas?: number;
  updatedReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  collisionCount?: number;
  conditions?: WorkloadCondition[];
  availableReplicas?: number;
}

export interface StatefulSet extends TypedObject {
  spec?: StatefulSetSpec;
  status?: StatefulSetStatus;
}

export interface JobTemplateSpec {
  metadata?: ObjectMeta;
  spec?: JobSpec;
}

export interface CronJobSpec {
  schedule: string;
  timeZone?: string;
  startingDeadlineSeconds?: number;
  concurrencyPolicy?: 'Allow' | 'Forbid' | 'Replace';
  suspend?: boolean;
  jobTemplate: JobTemplateSpec;
  successfulJobsHistoryLimit?: number;
  failedJobsHistoryLimit?: number;
}

export interface CronJobStatus {
  active?: Array<{ kind?: string; namespace?: string; name?: string; uid?: string;
    apiVersion?: string; resourceVersion?: string }>;
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
}

export interface CronJob extends TypedObject {
  spec?: CronJobSpec;
  status?: CronJobStatus;
}

/** apps/v1 ControllerRevision: an immutable snapshot of a StatefulSet's (or DaemonSet's)
 * template, as a patch in `data`, numbered by `revision`. */
export interface ControllerRevision extends TypedObject {
  data?: unknown;
  revision: number;
}
