// core/v1 Pod and the PodSpec pieces workloads embed (PodTemplateSpec), as upstream JSON.
// Rarely used sub-structures (volumes sources, affinity terms, probes) are kept loose.

import type {
  IntOrString, LabelSelector, LocalObjectReference, ObjectMeta, Quantity, TypedObject,
} from './meta.js';

export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type PullPolicy = 'Always' | 'Never' | 'IfNotPresent';
export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';
export type DNSPolicy = 'ClusterFirstWithHostNet' | 'ClusterFirst' | 'Default' | 'None';
export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
export type TerminationMessagePolicy = 'File' | 'FallbackToLogsOnError';

export interface ContainerPort {
  name?: string;
  hostPort?: number;
  containerPort: number;
  protocol?: Protocol;
  hostIP?: string;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { apiVersion?: string; fieldPath: string };
    resourceFieldRef?: { containerName?: string; resource: string; divisor?: Quantity };
    configMapKeyRef?: { name?: string; key: string; optional?: boolean };
    secretKeyRef?: { name?: string; key: string; optional?: boolean };
  };
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name?: string; optional?: boolean };
  secretRef?: { name?: string; optional?: boolean };
}

export interface ResourceRequirements {
  limits?: Record<string, Quantity>;
  requests?: Record<string, Quantity>;
  claims?: Array<{ name: string; request?: string }>;
}

export interface VolumeMount {
  name: string;
  readOnly?: boolean;
  mountPath: string;
  subPath?: string;
  mountPropagation?: string;
  subPathExpr?: string;
}

export interface ProbeHandler {
  exec?: { command?: string[] };
  httpGet?: {
    path?: string; port: IntOrString; host?: string; scheme?: 'HTTP' | 'HTTPS';
    httpHeaders?: Array<{ name: string; value: string }>;
  };
  tcpSocket?: { port: IntOrString; host?: string };
  grpc?: { port: number; service?: string };
}

export interface Probe extends ProbeHandler {
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: ContainerPort[];
  envFrom?: EnvFromSource[];
  env?: EnvVar[];
  resources?: ResourceRequirements;
  restartPolicy?: 'Always';
  volumeMounts?: VolumeMount[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { postStart?: ProbeHandler; preStop?: ProbeHandler; stopSignal?: string };
  terminationMessagePath?: string;
  terminationMessagePolicy?: TerminationMessagePolicy;
  imagePullPolicy?: PullPolicy;
  securityContext?: Record<string, unknown>;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
}

export interface Volume {
  name: string;
  /** Volume source (emptyDir, configMap, secret, hostPath, projected, ...), kept loose. */
  [source: string]: unknown;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' | '';
  tolerationSeconds?: number;
}

export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  labelSelector?: LabelSelector;
  minDomains?: number;
  nodeAffinityPolicy?: 'Honor' | 'Ignore';
  nodeTaintsPolicy?: 'Honor' | 'Ignore';
  matchLabelKeys?: string[];
}

export interface NodeSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface Affinity {
  nodeAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] };
    preferredDuringSchedulingIgnoredDuringExecution?: Array<{
      weight: number; preference: NodeSelectorTerm;
    }>;
  };
  podAffinity?: Record<string, unknown>;
  podAntiAffinity?: Record<string, unknown>;
}

export interface PodDNSConfig {
  nameservers?: string[];
  searches?: string[];
  options?: Array<{ name?: string; value?: string }>;
}

export interface PodSpec {
  volumes?: Volume[];
  initContainers?: Container[];
  containers: Container[];
  ephemeralContainers?: Array<Container & { targetContainerName?: string }>;
  restartPolicy?: RestartPolicy;
  terminationGracePeriodSeconds?: number;
  activeDeadlineSeconds?: number;
  dnsPolicy?: DNSPolicy;
  nodeSelector?: Record<string, string>;
  serviceAccountName?: string;
  /** Deprecated alias of serviceAccountName. */
  serviceAccount?: string;
  automountServiceAccountToken?: boolean;
  nodeName?: string;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  shareProcessNamespace?: boolean;
  securityContext?: Record<string, unknown>;
  imagePullSecrets?: LocalObjectReference[];
  hostname?: string;
  subdomain?: string;
  affinity?: Affinity;
  schedulerName?: string;
  tolerations?: Toleration[];
  hostAliases?: Array<{ ip: string; hostnames?: string[] }>;
  priorityClassName?: string;
  priority?: number;
  dnsConfig?: PodDNSConfig;
  readinessGates?: Array<{ conditionType: string }>;
  runtimeClassName?: string;
  enableServiceLinks?: boolean;
  preemptionPolicy?: 'PreemptLowerPriority' | 'Never';
  overhead?: Record<string, Quantity>;
  topologySpreadConstraints?: TopologySpreadConstraint[];
  setHostnameAsFQDN?: boolean;
  os?: { name: 'linux' | 'windows' };
  hostUsers?: boolean;
  schedulingGates?: Array<{ name: string }>;
  resourceClaims?: Array<Record<string, unknown>>;
  resources?: ResourceRequirements;
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
}

export interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt?: string };
  terminated?: {
    exitCode: number; signal?: number; reason?: string; message?: string;
    startedAt?: string; finishedAt?: string; containerID?: string;
  };
}

export interface ContainerStatus {
  name: string;
  state?: ContainerState;
  lastState?: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
}

export interface PodIP {
  ip: string;
}

export interface PodStatus {
  observedGeneration?: number;
  phase?: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  nominatedNodeName?: string;
  hostIP?: string;
  hostIPs?: PodIP[];
  podIP?: string;
  podIPs?: PodIP[];
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  ephemeralContainerStatuses?: ContainerStatus[];
  qosClass?: 'Guaranteed' | 'Burstable' | 'BestEffort';
}

export interface Pod extends TypedObject {
  spec?: PodSpec;
  status?: PodStatus;
}

/** core/v1 PodTemplateSpec, embedded by Deployment, ReplicaSet, DaemonSet, Job. */
export interface PodTemplateSpec {
  metadata?: ObjectMeta;
  spec?: PodSpec;
}

/** core/v1 Binding (the pods/binding subresource body). */
export interface Binding extends TypedObject {
  target: { kind?: string; name?: string; namespace?: string; apiVersion?: string };
}

/** policy/v1 Eviction (the pods/eviction subresource body). */
export interface Eviction extends TypedObject {
  deleteOptions?: Record<string, unknown>;
}
