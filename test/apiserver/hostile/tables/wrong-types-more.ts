// Wrong types for the other kinds kdp serves (Namespace, Node, EndpointSlice, Endpoints, Lease,
// Event, ServiceAccount, ReplicaSet, DaemonSet, Job, Role, ClusterRole, RoleBinding), by every
// write verb, with the same upstream expectations as wrong-types.ts.

import type { KindInfo } from '../fixtures.js';
import { NS } from '../fixtures.js';
import type { WrongType } from './wrong-types.js';
import { wrongTypesTable } from './wrong-types.js';

const RBAC = 'rbac.authorization.k8s.io/v1';
const nsPath = (gv: string, res: string) =>
  `${gv === 'v1' ? '/api/v1' : `/apis/${gv}`}/namespaces/${NS}/${res}`;
const podSpec = { containers: [{ name: 'c', image: 'busybox:1.36' }] };
const template = (app: string, extra: Record<string, unknown> = {}) =>
  ({ metadata: { labels: { app } }, spec: { ...podSpec, ...extra } });

const MORE_KINDS = {
  Namespace: { apiVersion: 'v1', collection: '/api/v1/namespaces', fixture: '',
    make: (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name },
      spec: { finalizers: ['kubernetes'] } }) },
  Node: { apiVersion: 'v1', collection: '/api/v1/nodes', fixture: '',
    make: (name: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name },
      spec: { unschedulable: false, taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] } }) },
  EndpointSlice: { apiVersion: 'discovery.k8s.io/v1', fixture: '',
    collection: nsPath('discovery.k8s.io/v1', 'endpointslices'),
    make: (name: string) => ({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
      metadata: { name, labels: { 'kubernetes.io/service-name': 'svc' } }, addressType: 'IPv4',
      endpoints: [{ addresses: ['10.1.2.3'], conditions: { ready: true } }],
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }) },
  Endpoints: { apiVersion: 'v1', collection: nsPath('v1', 'endpoints'), fixture: '',
    make: (name: string) => ({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name },
      subsets: [{ addresses: [{ ip: '10.1.2.3' }],
        ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] }) },
  Lease: { apiVersion: 'coordination.k8s.io/v1', fixture: '',
    collection: nsPath('coordination.k8s.io/v1', 'leases'),
    make: (name: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
      metadata: { name }, spec: { holderIdentity: 'me', leaseDurationSeconds: 15 } }) },
  Event: { apiVersion: 'v1', collection: nsPath('v1', 'events'), fixture: '',
    make: (name: string) => ({ apiVersion: 'v1', kind: 'Event', metadata: { name },
      involvedObject: { kind: 'Pod', name: 'pod', namespace: NS }, reason: 'Hostile',
      message: 'm', type: 'Normal', count: 1, source: { component: 'hostile' } }) },
  ServiceAccount: { apiVersion: 'v1', collection: nsPath('v1', 'serviceaccounts'), fixture: '',
    make: (name: string) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name },
      automountServiceAccountToken: false }) },
  ReplicaSet: { apiVersion: 'apps/v1', collection: nsPath('apps/v1', 'replicasets'), fixture: '',
    make: (name: string) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name },
      spec: { replicas: 1, selector: { matchLabels: { app: name } },
        template: template(name) } }) },
  DaemonSet: { apiVersion: 'apps/v1', collection: nsPath('apps/v1', 'daemonsets'), fixture: '',
    make: (name: string) => ({ apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name },
      spec: { minReadySeconds: 0, selector: { matchLabels: { app: name } },
        template: template(name) } }) },
  Job: { apiVersion: 'batch/v1', collection: nsPath('batch/v1', 'jobs'), fixture: '',
    make: (name: string) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
      spec: { backoffLimit: 1, parallelism: 1,
        template: { spec: { ...podSpec, restartPolicy: 'Never' } } } }) },
  Role: { apiVersion: RBAC, collection: nsPath(RBAC, 'roles'), fixture: '',
    make: (name: string) => ({ apiVersion: RBAC, kind: 'Role', metadata: { name },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] }) },
  ClusterRole: { apiVersion: RBAC, collection: `/apis/${RBAC}/clusterroles`, fixture: '',
    make: (name: string) => ({ apiVersion: RBAC, kind: 'ClusterRole', metadata: { name },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] }) },
  RoleBinding: { apiVersion: RBAC, collection: nsPath(RBAC, 'rolebindings'), fixture: '',
    make: (name: string) => ({ apiVersion: RBAC, kind: 'RoleBinding', metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'someone' }] }) },
} satisfies Record<string, KindInfo>;

type MoreKind = keyof typeof MORE_KINDS;

const MORE: readonly WrongType<MoreKind>[] = [
  { kind: 'Namespace', path: 'spec.finalizers', value: 'kubernetes',
    what: 'finalizers as a string', mentions: 'spec.finalizers' },
  { kind: 'Namespace', path: 'metadata.labels', value: { a: 5 }, what: 'a label as a number',
    mentions: 'metadata.labels' },
  { kind: 'Node', path: 'spec.unschedulable', value: 'yes', what: 'unschedulable "yes"',
    mentions: 'spec.unschedulable' },
  { kind: 'Node', path: 'spec.taints.0.effect', value: 5, what: 'a taint effect as a number',
    mentions: 'effect' },
  { kind: 'EndpointSlice', path: 'endpoints.0.addresses', value: '10.1.2.3',
    what: 'addresses as a string', mentions: 'addresses' },
  { kind: 'EndpointSlice', path: 'ports.0.port', value: '80', what: 'a port as a string',
    mentions: 'port' },
  { kind: 'EndpointSlice', path: 'endpoints.0.conditions.ready', value: 'yes',
    what: 'ready "yes"', mentions: 'ready' },
  { kind: 'Endpoints', path: 'subsets', value: { addresses: [] }, what: 'subsets as an object',
    mentions: 'subsets' },
  { kind: 'Endpoints', path: 'subsets.0.ports.0.port', value: 'x', what: 'a port "x"',
    mentions: 'port' },
  { kind: 'Lease', path: 'spec.leaseDurationSeconds', value: 'abc',
    what: 'leaseDurationSeconds "abc"', mentions: 'spec.leaseDurationSeconds' },
  { kind: 'Lease', path: 'spec.holderIdentity', value: 5, what: 'holderIdentity as a number',
    mentions: 'spec.holderIdentity' },
  { kind: 'Event', path: 'count', value: 'x', what: 'count "x"', mentions: 'count' },
  { kind: 'Event', path: 'involvedObject', value: 'pod', what: 'involvedObject as a string',
    mentions: 'involvedObject' },
  { kind: 'ServiceAccount', path: 'automountServiceAccountToken', value: 'yes',
    what: 'automountServiceAccountToken "yes"', mentions: 'automountServiceAccountToken' },
  { kind: 'ServiceAccount', path: 'secrets', value: { name: 's' }, what: 'secrets as an object',
    mentions: 'secrets' },
  { kind: 'ReplicaSet', path: 'spec.replicas', value: '2', what: 'replicas "2"',
    mentions: 'spec.replicas' },
  { kind: 'DaemonSet', path: 'spec.minReadySeconds', value: 'x', what: 'minReadySeconds "x"',
    mentions: 'spec.minReadySeconds' },
  { kind: 'DaemonSet', path: 'spec.template.spec.containers', value: { name: 'c' },
    what: 'containers as an object', mentions: 'spec.template.spec.containers' },
  { kind: 'Job', path: 'spec.backoffLimit', value: 'x', what: 'backoffLimit "x"',
    mentions: 'spec.backoffLimit' },
  { kind: 'Job', path: 'spec.parallelism', value: 1.5, what: 'parallelism 1.5',
    mentions: 'spec.parallelism' },
  { kind: 'Role', path: 'rules', value: { verbs: ['get'] }, what: 'rules as an object',
    mentions: 'rules' },
  { kind: 'Role', path: 'rules.0.verbs', value: 'get', what: 'verbs as a string',
    mentions: 'verbs' },
  { kind: 'ClusterRole', path: 'rules.0.apiGroups', value: 5, what: 'apiGroups as a number',
    mentions: 'apiGroups' },
  { kind: 'RoleBinding', path: 'subjects', value: { kind: 'User', name: 'x' },
    what: 'subjects as an object', mentions: 'subjects' },
];

export const WRONG_TYPES_MORE_TABLE = wrongTypesTable(MORE, MORE_KINDS, 'wm');
