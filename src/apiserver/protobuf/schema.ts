// Field tables for the protobuf messages kdp decodes: what kubectl >= 1.32's typed clients send
// (`create <generator>`, `auth can-i`). Numbers are interface facts from upstream's
// k8s.io/api and apimachinery `generated.proto` (v0.32), checked against captured kubectl bodies.
// Status fields (number 3 of top-level objects) are left out on purpose: ignored on create
// (except the CSR's, which kubectl's approval update carries).

export type Scalar = 'string' | 'bytes' | 'int' | 'bool' | 'intOrString' | 'quantity' | 'time';

export interface Field {
  readonly name: string;
  readonly type: Scalar | MessageSchema;
  readonly repeated?: boolean;
  /** Go pointer field: kept when present even if zero (`replicas: 0`). */
  readonly pointer?: boolean;
  /** `map<string, type>`, encoded as repeated `{1: key, 2: value}`. */
  readonly map?: boolean;
  /** An embedded Go struct: its fields appear in the parent's JSON. */
  readonly inline?: boolean;
}

export type MessageSchema = { readonly [fieldNumber: number]: Field };

const f = (name: string, type: Field['type'], more: Omit<Field, 'name' | 'type'> = {}): Field =>
  ({ name, type, ...more });
const s = (name: string) => f(name, 'string');
const ps = (name: string) => f(name, 'string', { pointer: true });
const rs = (name: string) => f(name, 'string', { repeated: true });
const i = (name: string) => f(name, 'int');
const pi = (name: string) => f(name, 'int', { pointer: true });
const b = (name: string) => f(name, 'bool');
const pb = (name: string) => f(name, 'bool', { pointer: true });
const m = (name: string, type: MessageSchema) => f(name, type);
const pm = (name: string, type: MessageSchema) => f(name, type, { pointer: true });
const rm = (name: string, type: MessageSchema) => f(name, type, { repeated: true });
const map = (name: string, type: Field['type']) => f(name, type, { map: true });

// --- apimachinery meta/v1
const OwnerReference: MessageSchema = {
  1: s('kind'), 3: s('name'), 4: s('uid'), 5: s('apiVersion'), 6: pb('controller'),
  7: pb('blockOwnerDeletion'),
};
export const ObjectMeta: MessageSchema = {
  1: s('name'), 2: s('generateName'), 3: s('namespace'), 5: s('uid'), 6: s('resourceVersion'),
  7: i('generation'), 8: f('creationTimestamp', 'time'), 9: f('deletionTimestamp', 'time'),
  10: pi('deletionGracePeriodSeconds'), 11: map('labels', 'string'),
  12: map('annotations', 'string'), 13: rm('ownerReferences', OwnerReference),
  14: rs('finalizers'),
};
const DeleteOptions: MessageSchema = {
  1: pi('gracePeriodSeconds'), 2: pm('preconditions', { 1: ps('uid'), 2: ps('resourceVersion') }),
  3: pb('orphanDependents'), 4: ps('propagationPolicy'), 5: rs('dryRun'),
};
const LabelSelector: MessageSchema = {
  1: map('matchLabels', 'string'),
  2: rm('matchExpressions', { 1: s('key'), 2: s('operator'), 3: rs('values') }),
};

// --- core/v1
const LocalObjectReference: MessageSchema = { 1: s('name') };
const KeySelector: MessageSchema = {
  1: f('', LocalObjectReference, { inline: true }), 2: s('key'), 3: pb('optional'),
};
const EnvVarSource: MessageSchema = {
  1: pm('fieldRef', { 1: s('apiVersion'), 2: s('fieldPath') }),
  2: pm('resourceFieldRef', { 1: s('containerName'), 2: s('resource'),
    3: f('divisor', 'quantity') }),
  3: pm('configMapKeyRef', KeySelector),
  4: pm('secretKeyRef', KeySelector),
};
const ContainerPort: MessageSchema = {
  1: s('name'), 2: i('hostPort'), 3: i('containerPort'), 4: s('protocol'), 5: s('hostIP'),
};
const Container: MessageSchema = {
  1: s('name'), 2: s('image'), 3: rs('command'), 4: rs('args'), 5: s('workingDir'),
  6: rm('ports', ContainerPort),
  7: rm('env', { 1: s('name'), 2: s('value'), 3: pm('valueFrom', EnvVarSource) }),
  8: m('resources', { 1: map('limits', 'quantity'), 2: map('requests', 'quantity') }),
  9: rm('volumeMounts', { 1: s('name'), 2: b('readOnly'), 3: s('mountPath'), 4: s('subPath') }),
  13: s('terminationMessagePath'), 14: s('imagePullPolicy'), 16: b('stdin'), 17: b('stdinOnce'),
  18: b('tty'), 20: s('terminationMessagePolicy'),
};
const Toleration: MessageSchema = {
  1: s('key'), 2: s('operator'), 3: s('value'), 4: s('effect'), 5: pi('tolerationSeconds'),
};
const PodSpec: MessageSchema = {
  2: rm('containers', Container), 3: s('restartPolicy'), 4: pi('terminationGracePeriodSeconds'),
  5: pi('activeDeadlineSeconds'), 6: s('dnsPolicy'), 7: map('nodeSelector', 'string'),
  8: s('serviceAccountName'), 9: s('serviceAccount'), 10: s('nodeName'), 11: b('hostNetwork'),
  12: b('hostPID'), 13: b('hostIPC'), 15: rm('imagePullSecrets', LocalObjectReference),
  16: s('hostname'), 17: s('subdomain'), 19: s('schedulerName'),
  20: rm('initContainers', Container), 21: pb('automountServiceAccountToken'),
  22: rm('tolerations', Toleration), 24: s('priorityClassName'), 25: pi('priority'),
};
const PodTemplateSpec: MessageSchema = { 1: m('metadata', ObjectMeta), 2: m('spec', PodSpec) };
const ServicePort: MessageSchema = {
  1: s('name'), 2: s('protocol'), 3: i('port'), 4: f('targetPort', 'intOrString'),
  5: i('nodePort'), 6: ps('appProtocol'),
};
const ServiceSpec: MessageSchema = {
  1: rm('ports', ServicePort), 2: map('selector', 'string'), 3: s('clusterIP'), 4: s('type'),
  5: rs('externalIPs'), 7: s('sessionAffinity'), 8: s('loadBalancerIP'),
  9: rs('loadBalancerSourceRanges'), 10: s('externalName'), 11: s('externalTrafficPolicy'),
  12: i('healthCheckNodePort'), 13: b('publishNotReadyAddresses'),
  14: pm('sessionAffinityConfig', { 1: pm('clientIP', { 1: pi('timeoutSeconds') }) }),
  17: ps('ipFamilyPolicy'), 18: rs('clusterIPs'), 19: rs('ipFamilies'),
  20: pb('allocateLoadBalancerNodePorts'), 21: ps('loadBalancerClass'),
  22: ps('internalTrafficPolicy'), 23: ps('trafficDistribution'),
};

// --- apps/v1
const DeploymentSpec: MessageSchema = {
  1: pi('replicas'), 2: pm('selector', LabelSelector), 3: m('template', PodTemplateSpec),
  4: m('strategy', {
    1: s('type'),
    2: pm('rollingUpdate', { 1: f('maxUnavailable', 'intOrString', { pointer: true }),
      2: f('maxSurge', 'intOrString', { pointer: true }) }),
  }),
  5: i('minReadySeconds'), 6: pi('revisionHistoryLimit'), 7: b('paused'),
  9: pi('progressDeadlineSeconds'),
};

// --- batch/v1
const JobSpec: MessageSchema = {
  1: pi('parallelism'), 2: pi('completions'), 3: pi('activeDeadlineSeconds'),
  4: pm('selector', LabelSelector), 5: pb('manualSelector'), 6: m('template', PodTemplateSpec),
  7: pi('backoffLimit'), 8: pi('ttlSecondsAfterFinished'), 9: ps('completionMode'),
  10: pb('suspend'),
};

const CronJobSpec: MessageSchema = {
  1: s('schedule'), 8: ps('timeZone'), 2: pi('startingDeadlineSeconds'), 3: s('concurrencyPolicy'),
  4: pb('suspend'), 5: m('jobTemplate', { 1: m('metadata', ObjectMeta), 2: m('spec', JobSpec) }),
  6: pi('successfulJobsHistoryLimit'), 7: pi('failedJobsHistoryLimit'),
};

// --- authorization/v1
const ResourceAttributes: MessageSchema = {
  1: s('namespace'), 2: s('verb'), 3: s('group'), 4: s('version'), 5: s('resource'),
  6: s('subresource'), 7: s('name'),
};
const NonResourceAttributes: MessageSchema = { 1: s('path'), 2: s('verb') };
const SubjectAccessReviewSpec: MessageSchema = {
  1: pm('resourceAttributes', ResourceAttributes),
  2: pm('nonResourceAttributes', NonResourceAttributes), 3: s('user'), 4: rs('groups'),
  6: s('uid'),
};

// --- rbac/v1
const PolicyRule: MessageSchema = {
  1: rs('verbs'), 2: rs('apiGroups'), 3: rs('resources'), 4: rs('resourceNames'),
  5: rs('nonResourceURLs'),
};
const Binding: MessageSchema = {
  1: m('metadata', ObjectMeta),
  2: rm('subjects', { 1: s('kind'), 2: s('apiGroup'), 3: s('name'), 4: s('namespace') }),
  3: m('roleRef', { 1: s('apiGroup'), 2: s('kind'), 3: s('name') }),
};

/** Top-level objects by `apiVersion/kind`. */
export const OBJECTS: Readonly<Record<string, MessageSchema>> = {
  'v1/Namespace': { 1: m('metadata', ObjectMeta), 2: m('spec', { 1: rs('finalizers') }) },
  'v1/ConfigMap': {
    1: m('metadata', ObjectMeta), 2: map('data', 'string'), 3: map('binaryData', 'bytes'),
    4: pb('immutable'),
  },
  'v1/Secret': {
    1: m('metadata', ObjectMeta), 2: map('data', 'bytes'), 3: s('type'),
    4: map('stringData', 'string'), 5: pb('immutable'),
  },
  'v1/Service': { 1: m('metadata', ObjectMeta), 2: m('spec', ServiceSpec) },
  'v1/Pod': { 1: m('metadata', ObjectMeta), 2: m('spec', PodSpec) },
  'v1/ServiceAccount': {
    1: m('metadata', ObjectMeta), 3: pb('automountServiceAccountToken'),
    4: rm('imagePullSecrets', LocalObjectReference),
  },
  'apps/v1/Deployment': { 1: m('metadata', ObjectMeta), 2: m('spec', DeploymentSpec) },
  'batch/v1/Job': { 1: m('metadata', ObjectMeta), 2: m('spec', JobSpec) },
  'batch/v1/CronJob': { 1: m('metadata', ObjectMeta), 2: m('spec', CronJobSpec) },
  // The body of typed-client DELETEs (`kubectl drain --disable-eviction`), and evictions.
  'v1/DeleteOptions': DeleteOptions,
  'meta.k8s.io/v1/DeleteOptions': DeleteOptions,
  'policy/v1/Eviction': { 1: m('metadata', ObjectMeta), 2: pm('deleteOptions', DeleteOptions) },
  // `kubectl create pdb` (policy/v1 generated.proto).
  'policy/v1/PodDisruptionBudget': {
    1: m('metadata', ObjectMeta),
    2: m('spec', { 1: f('minAvailable', 'intOrString', { pointer: true }), 2: pm('selector', LabelSelector),
      3: f('maxUnavailable', 'intOrString', { pointer: true }), 4: ps('unhealthyPodEvictionPolicy') }),
  },
  'authorization.k8s.io/v1/SelfSubjectAccessReview': {
    1: m('metadata', ObjectMeta),
    2: m('spec', { 1: pm('resourceAttributes', ResourceAttributes),
      2: pm('nonResourceAttributes', NonResourceAttributes) }),
  },
  'authorization.k8s.io/v1/SubjectAccessReview': {
    1: m('metadata', ObjectMeta), 2: m('spec', SubjectAccessReviewSpec),
  },
  'authorization.k8s.io/v1/LocalSubjectAccessReview': {
    1: m('metadata', ObjectMeta), 2: m('spec', SubjectAccessReviewSpec),
  },
  // `kubectl create token`, `auth whoami`, `auth can-i --list` (authentication/authorization v1).
  'authentication.k8s.io/v1/TokenRequest': {
    1: m('metadata', ObjectMeta),
    2: m('spec', { 1: rs('audiences'), 4: pi('expirationSeconds'),
      3: pm('boundObjectRef', { 1: s('kind'), 2: s('apiVersion'), 3: s('name'), 4: s('uid') }) }),
  },
  'authentication.k8s.io/v1/SelfSubjectReview': { 1: m('metadata', ObjectMeta) },
  'authentication.k8s.io/v1beta1/SelfSubjectReview': { 1: m('metadata', ObjectMeta) },
  'authorization.k8s.io/v1/SelfSubjectRulesReview': {
    1: m('metadata', ObjectMeta), 2: m('spec', { 1: s('namespace') }),
  },
  'rbac.authorization.k8s.io/v1/Role': { 1: m('metadata', ObjectMeta), 2: rm('rules', PolicyRule) },
  'rbac.authorization.k8s.io/v1/ClusterRole': {
    1: m('metadata', ObjectMeta), 2: rm('rules', PolicyRule),
    3: pm('aggregationRule', { 1: rm('clusterRoleSelectors', LabelSelector) }),
  },
  // `kubectl certificate approve|deny` (certificates/v1): the whole object, status included (the
  // approval subresource reads its conditions). `spec.extra` is left out: the server keeps the
  // stored spec on every update.
  'certificates.k8s.io/v1/CertificateSigningRequest': {
    1: m('metadata', ObjectMeta),
    2: m('spec', { 1: f('request', 'bytes'), 7: s('signerName'), 8: pi('expirationSeconds'), 5: rs('usages'),
      2: s('username'), 3: s('uid'), 4: rs('groups') }),
    3: m('status', { 1: rm('conditions', { 1: s('type'), 6: s('status'), 2: s('reason'), 3: s('message'),
      4: f('lastUpdateTime', 'time'), 5: f('lastTransitionTime', 'time') }), 2: f('certificate', 'bytes') }),
  },
  'rbac.authorization.k8s.io/v1/RoleBinding': Binding,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': Binding,
};
