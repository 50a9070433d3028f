// Type tables for core/v1 Pod and PodTemplateSpec, after upstream's OpenAPI v3 schema (v1.33).
// Volume sources and other fields kdp does not read are listed where their types are simple;
// anything not listed is kept as sent and not checked.

import type { Defs } from './compile.js';

const HANDLER = {
  exec: 'ExecAction', httpGet: 'HTTPGetAction', tcpSocket: 'TCPSocketAction',
} as const;

const SECURITY_COMMON = {
  seLinuxOptions: 'SELinuxOptions', windowsOptions: 'WindowsSecurityContextOptions',
  runAsUser: 'int64', runAsGroup: 'int64', runAsNonRoot: 'bool',
  seccompProfile: 'SeccompProfile', appArmorProfile: 'AppArmorProfile',
} as const;

const CONTAINER = {
  name: 'string', image: 'string', command: '[]string', args: '[]string', workingDir: 'string',
  ports: '[]ContainerPort', envFrom: '[]EnvFromSource', env: '[]EnvVar',
  resources: 'ResourceRequirements', resizePolicy: '[]ContainerResizePolicy',
  restartPolicy: 'string', volumeMounts: '[]VolumeMount', volumeDevices: '[]VolumeDevice',
  livenessProbe: 'Probe', readinessProbe: 'Probe', startupProbe: 'Probe',
  lifecycle: 'Lifecycle', terminationMessagePath: 'string', terminationMessagePolicy: 'string',
  imagePullPolicy: 'string', securityContext: 'SecurityContext', stdin: 'bool',
  stdinOnce: 'bool', tty: 'bool',
} as const;

const KEY_REF = { name: 'string', key: 'string', optional: 'bool' } as const;
const KEY_TO_PATHS = { name: 'string', items: '[]KeyToPath', optional: 'bool' } as const;

export const POD_TYPES: Defs = {
  PodTemplateSpec: { metadata: 'ObjectMeta', spec: 'PodSpec' },
  PodSpec: {
    volumes: '[]Volume', initContainers: '[]Container', containers: '[]Container',
    ephemeralContainers: '[]EphemeralContainer', restartPolicy: 'string',
    terminationGracePeriodSeconds: 'int64', activeDeadlineSeconds: 'int64', dnsPolicy: 'string',
    nodeSelector: 'map[string]string', serviceAccountName: 'string', serviceAccount: 'string',
    automountServiceAccountToken: 'bool', nodeName: 'string', hostNetwork: 'bool',
    hostPID: 'bool', hostIPC: 'bool', shareProcessNamespace: 'bool',
    securityContext: 'PodSecurityContext', imagePullSecrets: '[]LocalObjectReference',
    hostname: 'string', subdomain: 'string', affinity: 'Affinity', schedulerName: 'string',
    tolerations: '[]Toleration', hostAliases: '[]HostAlias', priorityClassName: 'string',
    priority: 'int32', dnsConfig: 'PodDNSConfig', readinessGates: '[]PodReadinessGate',
    runtimeClassName: 'string', enableServiceLinks: 'bool', preemptionPolicy: 'string',
    overhead: 'ResourceList', topologySpreadConstraints: '[]TopologySpreadConstraint',
    setHostnameAsFQDN: 'bool', os: 'PodOS', hostUsers: 'bool',
    schedulingGates: '[]PodSchedulingGate', resourceClaims: '[]PodResourceClaim',
    resources: 'ResourceRequirements',
  },
  Container: CONTAINER,
  EphemeralContainer: { ...CONTAINER, targetContainerName: 'string' },
  ContainerPort: {
    name: 'string', hostPort: 'int32', containerPort: 'int32', protocol: 'string',
    hostIP: 'string',
  },
  EnvFromSource: {
    prefix: 'string', configMapRef: 'ConfigMapEnvSource', secretRef: 'SecretEnvSource',
  },
  ConfigMapEnvSource: { name: 'string', optional: 'bool' },
  SecretEnvSource: { name: 'string', optional: 'bool' },
  EnvVar: { name: 'string', value: 'string', valueFrom: 'EnvVarSource' },
  EnvVarSource: {
    fieldRef: 'ObjectFieldSelector', resourceFieldRef: 'ResourceFieldSelector',
    configMapKeyRef: 'ConfigMapKeySelector', secretKeyRef: 'SecretKeySelector',
  },
  ObjectFieldSelector: { apiVersion: 'string', fieldPath: 'string' },
  ResourceFieldSelector: { containerName: 'string', resource: 'string', divisor: 'quantity' },
  ConfigMapKeySelector: KEY_REF,
  SecretKeySelector: KEY_REF,
  ResourceRequirements: {
    limits: 'ResourceList', requests: 'ResourceList', claims: '[]ResourceClaim',
  },
  ResourceClaim: { name: 'string', request: 'string' },
  ContainerResizePolicy: { resourceName: 'string', restartPolicy: 'string' },
  VolumeMount: {
    name: 'string', readOnly: 'bool', recursiveReadOnly: 'string', mountPath: 'string',
    subPath: 'string', mountPropagation: 'string', subPathExpr: 'string',
  },
  VolumeDevice: { name: 'string', devicePath: 'string' },
  Probe: {
    ...HANDLER, grpc: 'GRPCAction', initialDelaySeconds: 'int32', timeoutSeconds: 'int32',
    periodSeconds: 'int32', successThreshold: 'int32', failureThreshold: 'int32',
    terminationGracePeriodSeconds: 'int64',
  },
  ExecAction: { command: '[]string' },
  HTTPGetAction: {
    path: 'string', port: 'intstr', host: 'string', scheme: 'string',
    httpHeaders: '[]HTTPHeader',
  },
  HTTPHeader: { name: 'string', value: 'string' },
  TCPSocketAction: { port: 'intstr', host: 'string' },
  GRPCAction: { port: 'int32', service: 'string' },
  Lifecycle: { postStart: 'LifecycleHandler', preStop: 'LifecycleHandler', stopSignal: 'string' },
  LifecycleHandler: { ...HANDLER, sleep: 'SleepAction' },
  SleepAction: { seconds: 'int64' },
  SecurityContext: {
    ...SECURITY_COMMON, capabilities: 'Capabilities', privileged: 'bool',
    readOnlyRootFilesystem: 'bool', allowPrivilegeEscalation: 'bool', procMount: 'string',
  },
  PodSecurityContext: {
    ...SECURITY_COMMON, supplementalGroups: '[]int64', supplementalGroupsPolicy: 'string',
    fsGroup: 'int64', sysctls: '[]Sysctl', fsGroupChangePolicy: 'string',
    seLinuxChangePolicy: 'string',
  },
  Capabilities: { add: '[]string', drop: '[]string' },
  SELinuxOptions: { user: 'string', role: 'string', type: 'string', level: 'string' },
  WindowsSecurityContextOptions: {
    gmsaCredentialSpecName: 'string', gmsaCredentialSpec: 'string', runAsUserName: 'string',
    hostProcess: 'bool',
  },
  SeccompProfile: { type: 'string', localhostProfile: 'string' },
  AppArmorProfile: { type: 'string', localhostProfile: 'string' },
  Sysctl: { name: 'string', value: 'string' },
  Volume: {
    name: 'string', hostPath: 'HostPathVolumeSource', emptyDir: 'EmptyDirVolumeSource',
    secret: 'SecretVolumeSource', configMap: 'ConfigMapVolumeSource',
    persistentVolumeClaim: 'PersistentVolumeClaimVolumeSource',
    downwardAPI: 'DownwardAPIVolumeSource', projected: 'ProjectedVolumeSource',
  },
  HostPathVolumeSource: { path: 'string', type: 'string' },
  EmptyDirVolumeSource: { medium: 'string', sizeLimit: 'quantity' },
  SecretVolumeSource: {
    secretName: 'string', items: '[]KeyToPath', defaultMode: 'int32', optional: 'bool',
  },
  ConfigMapVolumeSource: { ...KEY_TO_PATHS, defaultMode: 'int32' },
  KeyToPath: { key: 'string', path: 'string', mode: 'int32' },
  PersistentVolumeClaimVolumeSource: { claimName: 'string', readOnly: 'bool' },
  DownwardAPIVolumeSource: { items: '[]DownwardAPIVolumeFile', defaultMode: 'int32' },
  DownwardAPIVolumeFile: {
    path: 'string', fieldRef: 'ObjectFieldSelector', resourceFieldRef: 'ResourceFieldSelector',
    mode: 'int32',
  },
  ProjectedVolumeSource: { sources: '[]VolumeProjection', defaultMode: 'int32' },
  VolumeProjection: {
    secret: 'SecretProjection', configMap: 'ConfigMapProjection',
    downwardAPI: 'DownwardAPIProjection', serviceAccountToken: 'ServiceAccountTokenProjection',
  },
  SecretProjection: KEY_TO_PATHS,
  ConfigMapProjection: KEY_TO_PATHS,
  DownwardAPIProjection: { items: '[]DownwardAPIVolumeFile' },
  ServiceAccountTokenProjection: {
    audience: 'string', expirationSeconds: 'int64', path: 'string',
  },
  Toleration: {
    key: 'string', operator: 'string', value: 'string', effect: 'string',
    tolerationSeconds: 'int64',
  },
  HostAlias: { ip: 'string', hostnames: '[]string' },
  PodDNSConfig: {
    nameservers: '[]string', searches: '[]string', options: '[]PodDNSConfigOption',
  },
  PodDNSConfigOption: { name: 'string', value: 'string' },
  PodReadinessGate: { conditionType: 'string' },
  TopologySpreadConstraint: {
    maxSkew: 'int32', topologyKey: 'string', whenUnsatisfiable: 'string',
    labelSelector: 'LabelSelector', minDomains: 'int32', nodeAffinityPolicy: 'string',
    nodeTaintsPolicy: 'string', matchLabelKeys: '[]string',
  },
  PodOS: { name: 'string' },
  PodSchedulingGate: { name: 'string' },
  PodResourceClaim: {
    name: 'string', resourceClaimName: 'string', resourceClaimTemplateName: 'string',
  },
  Affinity: {
    nodeAffinity: 'NodeAffinity', podAffinity: 'PodAffinity', podAntiAffinity: 'PodAntiAffinity',
  },
  NodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: 'NodeSelector',
    preferredDuringSchedulingIgnoredDuringExecution: '[]PreferredSchedulingTerm',
  },
  NodeSelector: { nodeSelectorTerms: '[]NodeSelectorTerm' },
  NodeSelectorTerm: {
    matchExpressions: '[]NodeSelectorRequirement', matchFields: '[]NodeSelectorRequirement',
  },
  NodeSelectorRequirement: { key: 'string', operator: 'string', values: '[]string' },
  PreferredSchedulingTerm: { weight: 'int32', preference: 'NodeSelectorTerm' },
  PodAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: '[]PodAffinityTerm',
    preferredDuringSchedulingIgnoredDuringExecution: '[]WeightedPodAffinityTerm',
  },
  PodAntiAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: '[]PodAffinityTerm',
    preferredDuringSchedulingIgnoredDuringExecution: '[]WeightedPodAffinityTerm',
  },
  PodAffinityTerm: {
    labelSelector: 'LabelSelector', namespaces: '[]string', topologyKey: 'string',
    namespaceSelector: 'LabelSelector', matchLabelKeys: '[]string',
    mismatchLabelKeys: '[]string',
  },
  WeightedPodAffinityTerm: { weight: 'int32', podAffinityTerm: 'PodAffinityTerm' },
  PodStatus: {
    observedGeneration: 'int64', phase: 'string', conditions: '[]PodCondition',
    message: 'string', reason: 'string', nominatedNodeName: 'string', hostIP: 'string',
    hostIPs: '[]HostIP', podIP: 'string', podIPs: '[]PodIP', startTime: 'time',
    initContainerStatuses: '[]ContainerStatus', containerStatuses: '[]ContainerStatus',
    qosClass: 'string', ephemeralContainerStatuses: '[]ContainerStatus', resize: 'string',
  },
  PodCondition: {
    type: 'string', observedGeneration: 'int64', status: 'string', lastProbeTime: 'time',
    lastTransitionTime: 'time', reason: 'string', message: 'string',
  },
  HostIP: { ip: 'string' },
  PodIP: { ip: 'string' },
  ContainerStatus: {
    name: 'string', state: 'ContainerState', lastState: 'ContainerState', ready: 'bool',
    restartCount: 'int32', image: 'string', imageID: 'string', containerID: 'string',
    started: 'bool',
  },
  ContainerState: {
    waiting: 'ContainerStateWaiting', running: 'ContainerStateRunning',
    terminated: 'ContainerStateTerminated',
  },
  ContainerStateWaiting: { reason: 'string', message: 'string' },
  ContainerStateRunning: { startedAt: 'time' },
  ContainerStateTerminated: {
    exitCode: 'int32', signal: 'int32', reason: 'string', message: 'string',
    startedAt: 'time', finishedAt: 'time', containerID: 'string',
  },
};
