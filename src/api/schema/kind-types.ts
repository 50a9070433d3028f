// Type tables for every kind kdp serves (besides Pod's spec, in pod-types.ts), after upstream's
// OpenAPI v3 schema (v1.33). Each kind's root struct embeds TypeMeta and has `metadata`.

import type { Defs } from './compile.js';
import { TYPE_META } from './meta-types.js';

/** Every kind's top level is listed whole: other top-level fields are dropped on decode. */
const ROOT = { ...TYPE_META, metadata: 'ObjectMeta', $complete: 'true' } as const;

const CONDITION = {
  type: 'string', status: 'string', lastTransitionTime: 'time', reason: 'string',
  message: 'string',
} as const;

const WORKLOAD_CONDITION = { ...CONDITION, lastUpdateTime: 'time' } as const;

const SUBJECTS = { subjects: '[]Subject', roleRef: 'RoleRef' } as const;

export const CORE_TYPES: Defs = {
  Pod: { ...ROOT, spec: 'PodSpec', status: 'PodStatus' },
  Service: { ...ROOT, spec: 'ServiceSpec', status: 'ServiceStatus' },
  ServiceSpec: {
    ports: '[]ServicePort', selector: 'map[string]string', clusterIP: 'string',
    clusterIPs: '[]string', type: 'string', externalIPs: '[]string',
    sessionAffinity: 'string', loadBalancerIP: 'string', loadBalancerSourceRanges: '[]string',
    externalName: 'string', externalTrafficPolicy: 'string', healthCheckNodePort: 'int32',
    publishNotReadyAddresses: 'bool', sessionAffinityConfig: 'SessionAffinityConfig',
    ipFamilies: '[]string', ipFamilyPolicy: 'string', allocateLoadBalancerNodePorts: 'bool',
    loadBalancerClass: 'string', internalTrafficPolicy: 'string',
    trafficDistribution: 'string',
  },
  ServicePort: {
    name: 'string', protocol: 'string', appProtocol: 'string', port: 'int32',
    targetPort: 'intstr', nodePort: 'int32',
  },
  SessionAffinityConfig: { clientIP: 'ClientIPConfig' },
  ClientIPConfig: { timeoutSeconds: 'int32' },
  ServiceStatus: { loadBalancer: 'LoadBalancerStatus', conditions: '[]Condition' },
  LoadBalancerStatus: { ingress: '[]LoadBalancerIngress' },
  LoadBalancerIngress: {
    ip: 'string', hostname: 'string', ipMode: 'string', ports: '[]PortStatus',
  },
  PortStatus: { port: 'int32', protocol: 'string', error: 'string' },
  Endpoints: { ...ROOT, subsets: '[]EndpointSubset' },
  EndpointSubset: {
    addresses: '[]EndpointAddress', notReadyAddresses: '[]EndpointAddress',
    ports: '[]EndpointPort',
  },
  EndpointAddress: {
    ip: 'string', hostname: 'string', nodeName: 'string', targetRef: 'ObjectReference',
  },
  EndpointPort: { name: 'string', port: 'int32', protocol: 'string', appProtocol: 'string' },
  Event: {
    ...ROOT, involvedObject: 'ObjectReference', reason: 'string', message: 'string',
    source: 'EventSource', firstTimestamp: 'time', lastTimestamp: 'time', count: 'int32',
    type: 'string', eventTime: 'time', series: 'EventSeries', action: 'string',
    related: 'ObjectReference', reportingComponent: 'string', reportingInstance: 'string',
  },
  EventSource: { component: 'string', host: 'string' },
  EventSeries: { count: 'int32', lastObservedTime: 'time' },
  ConfigMap: {
    ...ROOT, data: 'map[string]string', binaryData: 'map[string]byte', immutable: 'bool',
  },
  Secret: {
    ...ROOT, data: 'map[string]byte', stringData: 'map[string]string', type: 'string',
    immutable: 'bool',
  },
  ServiceAccount: {
    ...ROOT, secrets: '[]ObjectReference', imagePullSecrets: '[]LocalObjectReference',
    automountServiceAccountToken: 'bool',
  },
  Namespace: { ...ROOT, spec: 'NamespaceSpec', status: 'NamespaceStatus' },
  NamespaceSpec: { finalizers: '[]string' },
  NamespaceStatus: { phase: 'string', conditions: '[]NamespaceCondition' },
  NamespaceCondition: CONDITION,
  Node: { ...ROOT, spec: 'NodeSpec', status: 'NodeStatus' },
  NodeSpec: {
    podCIDR: 'string', podCIDRs: '[]string', providerID: 'string', unschedulable: 'bool',
    taints: '[]Taint', externalID: 'string',
  },
  Taint: { key: 'string', value: 'string', effect: 'string', timeAdded: 'time' },
  NodeStatus: {
    capacity: 'ResourceList', allocatable: 'ResourceList', phase: 'string',
    conditions: '[]NodeCondition', addresses: '[]NodeAddress',
    daemonEndpoints: 'NodeDaemonEndpoints', nodeInfo: 'NodeSystemInfo',
    images: '[]ContainerImage', volumesInUse: '[]string', volumesAttached: '[]AttachedVolume',
  },
  NodeCondition: { ...CONDITION, lastHeartbeatTime: 'time' },
  NodeAddress: { type: 'string', address: 'string' },
  NodeDaemonEndpoints: { kubeletEndpoint: 'DaemonEndpoint' },
  DaemonEndpoint: { Port: 'int32' },
  NodeSystemInfo: {
    machineID: 'string', systemUUID: 'string', bootID: 'string', kernelVersion: 'string',
    osImage: 'string', containerRuntimeVersion: 'string', kubeletVersion: 'string',
    kubeProxyVersion: 'string', operatingSystem: 'string', architecture: 'string',
  },
  ContainerImage: { names: '[]string', sizeBytes: 'int64' },
  AttachedVolume: { name: 'string', devicePath: 'string' },
};

export const GROUP_TYPES: Defs = {
  Deployment: { ...ROOT, spec: 'DeploymentSpec', status: 'DeploymentStatus' },
  DeploymentSpec: {
    replicas: 'int32', selector: 'LabelSelector', template: 'PodTemplateSpec',
    strategy: 'DeploymentStrategy', minReadySeconds: 'int32', revisionHistoryLimit: 'int32',
    paused: 'bool', progressDeadlineSeconds: 'int32',
  },
  DeploymentStrategy: { type: 'string', rollingUpdate: 'RollingUpdateDeployment' },
  RollingUpdateDeployment: { maxUnavailable: 'intstr', maxSurge: 'intstr' },
  DeploymentStatus: {
    observedGeneration: 'int64', replicas: 'int32', updatedReplicas: 'int32',
    readyReplicas: 'int32', availableReplicas: 'int32', unavailableReplicas: 'int32',
    terminatingReplicas: 'int32', conditions: '[]DeploymentCondition', collisionCount: 'int32',
  },
  DeploymentCondition: WORKLOAD_CONDITION,
  ReplicaSet: { ...ROOT, spec: 'ReplicaSetSpec', status: 'ReplicaSetStatus' },
  ReplicaSetSpec: {
    replicas: 'int32', minReadySeconds: 'int32', selector: 'LabelSelector',
    template: 'PodTemplateSpec',
  },
  ReplicaSetStatus: {
    replicas: 'int32', fullyLabeledReplicas: 'int32', readyReplicas: 'int32',
    availableReplicas: 'int32', terminatingReplicas: 'int32', observedGeneration: 'int64',
    conditions: '[]ReplicaSetCondition',
  },
  ReplicaSetCondition: CONDITION,
  DaemonSet: { ...ROOT, spec: 'DaemonSetSpec', status: 'DaemonSetStatus' },
  DaemonSetSpec: {
    selector: 'LabelSelector', template: 'PodTemplateSpec',
    updateStrategy: 'DaemonSetUpdateStrategy', minReadySeconds: 'int32',
    revisionHistoryLimit: 'int32',
  },
  DaemonSetUpdateStrategy: { type: 'string', rollingUpdate: 'RollingUpdateDaemonSet' },
  RollingUpdateDaemonSet: { maxUnavailable: 'intstr', maxSurge: 'intstr' },
  DaemonSetStatus: {
    currentNumberScheduled: 'int32', numberMisscheduled: 'int32',
    desiredNumberScheduled: 'int32', numberReady: 'int32', observedGeneration: 'int64',
    updatedNumberScheduled: 'int32', numberAvailable: 'int32', numberUnavailable: 'int32',
    collisionCount: 'int32', conditions: '[]DaemonSetCondition',
  },
  DaemonSetCondition: CONDITION,
  Scale: { ...ROOT, spec: 'ScaleSpec', status: 'ScaleStatus' },
  Binding: { ...ROOT, target: 'ObjectReference' },
  Eviction: { ...ROOT, deleteOptions: 'DeleteOptions' },
  DeleteOptions: {
    ...TYPE_META, gracePeriodSeconds: 'int64', preconditions: 'Preconditions',
    orphanDependents: 'bool', propagationPolicy: 'string', dryRun: '[]string',
    ignoreStoreReadErrorWithClusterBreakingPotential: 'bool',
  },
  Preconditions: { uid: 'string', resourceVersion: 'string' },
  ScaleSpec: { replicas: 'int32' },
  ScaleStatus: { replicas: 'int32', selector: 'string' },
  Job: { ...ROOT, spec: 'JobSpec', status: 'JobStatus' },
  JobSpec: {
    parallelism: 'int32', completions: 'int32', activeDeadlineSeconds: 'int64',
    backoffLimit: 'int32', backoffLimitPerIndex: 'int32', maxFailedIndexes: 'int32',
    selector: 'LabelSelector', manualSelector: 'bool', template: 'PodTemplateSpec',
    ttlSecondsAfterFinished: 'int32', completionMode: 'string', suspend: 'bool',
    podReplacementPolicy: 'string', managedBy: 'string',
  },
  JobStatus: {
    conditions: '[]JobCondition', startTime: 'time', completionTime: 'time', active: 'int32',
    succeeded: 'int32', failed: 'int32', terminating: 'int32', completedIndexes: 'string',
    failedIndexes: 'string', uncountedTerminatedPods: 'UncountedTerminatedPods',
    ready: 'int32',
  },
  JobCondition: { ...CONDITION, lastProbeTime: 'time' },
  UncountedTerminatedPods: { succeeded: '[]string', failed: '[]string' },
  StatefulSet: { ...ROOT, spec: 'StatefulSetSpec', status: 'StatefulSetStatus' },
  StatefulSetSpec: {
    replicas: 'int32', selector: 'LabelSelector', template: 'PodTemplateSpec',
    volumeClaimTemplates: '[]any', serviceName: 'string', podManagementPolicy: 'string',
    updateStrategy: 'StatefulSetUpdateStrategy', revisionHistoryLimit: 'int32',
    minReadySeconds: 'int32',
    persistentVolumeClaimRetentionPolicy: 'StatefulSetPersistentVolumeClaimRetentionPolicy',
    ordinals: 'StatefulSetOrdinals',
  },
  StatefulSetUpdateStrategy: { type: 'string', rollingUpdate: 'RollingUpdateStatefulSetStrategy' },
  RollingUpdateStatefulSetStrategy: { partition: 'int32', maxUnavailable: 'intstr' },
  StatefulSetPersistentVolumeClaimRetentionPolicy: { whenDeleted: 'string', whenScaled: 'string' },
  StatefulSetOrdinals: { start: 'int32' },
  StatefulSetStatus: {
    observedGeneration: 'int64', replicas: 'int32', readyReplicas: 'int32',
    currentReplicas: 'int32', updatedReplicas: 'int32', currentRevision: 'string',
    updateRevision: 'string', collisionCount: 'int32', conditions: '[]StatefulSetCondition',
    availableReplicas: 'int32',
  },
  StatefulSetCondition: CONDITION,
  CronJob: { ...ROOT, spec: 'CronJobSpec', status: 'CronJobStatus' },
  ControllerRevision: { ...ROOT, data: 'any', revision: 'int64' },
  CronJobSpec: {
    schedule: 'string', timeZone: 'string', startingDeadlineSeconds: 'int64',
    concurrencyPolicy: 'string', suspend: 'bool', jobTemplate: 'JobTemplateSpec',
    successfulJobsHistoryLimit: 'int32', failedJobsHistoryLimit: 'int32',
  },
  JobTemplateSpec: { metadata: 'ObjectMeta', spec: 'JobSpec' },
  CronJobStatus: {
    active: '[]ObjectReference', lastScheduleTime: 'time', lastSuccessfulTime: 'time',
  },
  EndpointSlice: {
    ...ROOT, addressType: 'string', endpoints: '[]Endpoint', ports: '[]EndpointSlicePort',
  },
  Endpoint: {
    addresses: '[]string', conditions: 'EndpointConditions', hostname: 'string',
    targetRef: 'ObjectReference', deprecatedTopology: 'map[string]string',
    nodeName: 'string', zone: 'string', hints: 'EndpointHints',
  },
  EndpointConditions: { ready: 'bool', serving: 'bool', terminating: 'bool' },
  EndpointHints: { forZones: '[]ForZone', forNodes: '[]ForNode' },
  ForZone: { name: 'string' },
  ForNode: { name: 'string' },
  EndpointSlicePort: {
    $go: 'v1.EndpointPort', name: 'string', protocol: 'string', port: 'int32',
    appProtocol: 'string',
  },
  CertificateSigningRequest: { ...ROOT, spec: 'CertificateSigningRequestSpec',
    status: 'CertificateSigningRequestStatus' },
  CertificateSigningRequestSpec: {
    request: 'byte', signerName: 'string', expirationSeconds: 'int32', usages: '[]string',
    username: 'string', uid: 'string', groups: '[]string', extra: 'map[string][]string',
  },
  CertificateSigningRequestStatus: {
    conditions: '[]CertificateSigningRequestCondition', certificate: 'byte',
  },
  CertificateSigningRequestCondition: { ...CONDITION, lastUpdateTime: 'time' },
  Lease: { ...ROOT, spec: 'LeaseSpec' },
  LeaseSpec: {
    holderIdentity: 'string', leaseDurationSeconds: 'int32', acquireTime: 'time',
    renewTime: 'time', leaseTransitions: 'int32', strategy: 'string',
    preferredHolder: 'string',
  },
  ServiceCIDR: { ...ROOT, spec: 'ServiceCIDRSpec', status: 'ServiceCIDRStatus' },
  ServiceCIDRSpec: { cidrs: '[]string' },
  ServiceCIDRStatus: { conditions: '[]Condition' },
  PodDisruptionBudget: { ...ROOT, spec: 'PodDisruptionBudgetSpec', status: 'PodDisruptionBudgetStatus' },
  PodDisruptionBudgetSpec: {
    minAvailable: 'intstr', selector: 'LabelSelector', maxUnavailable: 'intstr',
    unhealthyPodEvictionPolicy: 'string',
  },
  PodDisruptionBudgetStatus: {
    observedGeneration: 'int64', disruptedPods: 'map[string]time', disruptionsAllowed: 'int32',
    currentHealthy: 'int32', desiredHealthy: 'int32', expectedPods: 'int32', conditions: '[]Condition',
  },
  NetworkPolicy: { ...ROOT, spec: 'NetworkPolicySpec' },
  NetworkPolicySpec: {
    podSelector: 'LabelSelector', ingress: '[]NetworkPolicyIngressRule',
    egress: '[]NetworkPolicyEgressRule', policyTypes: '[]string',
  },
  NetworkPolicyIngressRule: { ports: '[]NetworkPolicyPort', from: '[]NetworkPolicyPeer' },
  NetworkPolicyEgressRule: { ports: '[]NetworkPolicyPort', to: '[]NetworkPolicyPeer' },
  NetworkPolicyPort: { protocol: 'string', port: 'intstr', endPort: 'int32' },
  NetworkPolicyPeer: {
    podSelector: 'LabelSelector', namespaceSelector: 'LabelSelector', ipBlock: 'IPBlock',
  },
  IPBlock: { cidr: 'string', except: '[]string' },
  Role: { ...ROOT, rules: '[]PolicyRule' },
  ClusterRole: { ...ROOT, rules: '[]PolicyRule', aggregationRule: 'AggregationRule' },
  PolicyRule: {
    verbs: '[]string', apiGroups: '[]string', resources: '[]string',
    resourceNames: '[]string', nonResourceURLs: '[]string',
  },
  AggregationRule: { clusterRoleSelectors: '[]LabelSelector' },
  RoleBinding: { ...ROOT, ...SUBJECTS },
  ClusterRoleBinding: { ...ROOT, ...SUBJECTS },
  Subject: { kind: 'string', apiGroup: 'string', name: 'string', namespace: 'string' },
  RoleRef: { apiGroup: 'string', kind: 'string', name: 'string' },
};
