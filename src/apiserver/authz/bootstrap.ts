// The default RBAC policy written at first start, after upstream's bootstrap policy
// (plugin/pkg/auth/authorizer/rbac/bootstrappolicy). Differences, each for a kdp reason:
// - `system:node` is bound to group `system:nodes` (upstream uses the Node authorizer instead)
//   and may read EndpointSlices/Endpoints, since kdp's node agent also runs kube-proxy;
// - `system:kube-controller-manager` holds what all of kdp's controllers need, because kdp runs
//   them under one identity (upstream gives each controller its own ServiceAccount role).

import type { KubeObject } from '../../client/types.js';
import type { PolicyRule, Subject } from './rules.js';

const RBAC_V1 = 'rbac.authorization.k8s.io/v1';
const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

function rule(verbs: string[], apiGroups: string[], resources: string[],
  resourceNames?: string[]): PolicyRule {
  return { verbs, apiGroups, resources, ...(resourceNames ? { resourceNames } : {}) };
}

function urls(verbs: string[], nonResourceURLs: string[]): PolicyRule {
  return { verbs, nonResourceURLs };
}

function meta(name: string, labels: Record<string, string> = {}): KubeObject['metadata'] {
  return {
    name,
    labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults', ...labels },
    annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
  };
}

function clusterRole(name: string, rules: PolicyRule[], labels?: Record<string, string>,
  aggregateFrom?: string): KubeObject {
  const role: KubeObject = { apiVersion: RBAC_V1, kind: 'ClusterRole', metadata: meta(name, labels),
    rules };
  if (aggregateFrom) {
    role.aggregationRule = {
      clusterRoleSelectors: [{ matchLabels: { [aggregateFrom]: 'true' } }],
    };
    role.rules = [];
  }
  return role;
}

function binding(name: string, roleName: string, subjects: Subject[]): KubeObject {
  return {
    apiVersion: RBAC_V1, kind: 'ClusterRoleBinding', metadata: meta(name),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
    subjects: subjects.map((s) => s.kind === 'ServiceAccount' ? s
      : { apiGroup: 'rbac.authorization.k8s.io', ...s }),
  };
}

const group = (name: string): Subject => ({ kind: 'Group', name });
const user = (name: string): Subject => ({ kind: 'User', name });

const EVENTS = [rule(['create', 'patch', 'update'], ['', 'events.k8s.io'], ['events'])];
const AGG = 'rbac.authorization.k8s.io/aggregate-to-';

function viewRules(): PolicyRule[] {
  return [
    rule(READ, [''], ['pods', 'replicationcontrollers', 'replicationcontrollers/scale',
      'serviceaccounts', 'services', 'services/status', 'endpoints', 'persistentvolumeclaims',
      'persistentvolumeclaims/status', 'configmaps']),
    rule(READ, [''], ['bindings', 'events', 'limitranges', 'namespaces/status', 'pods/log',
      'pods/status', 'replicationcontrollers/status', 'resourcequotas', 'resourcequotas/status']),
    rule(READ, [''], ['namespaces']),
    rule(READ, ['discovery.k8s.io'], ['endpointslices']),
    rule(READ, ['apps'], ['controllerrevisions', 'daemonsets', 'daemonsets/status', 'deployments',
      'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale',
      'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status']),
    rule(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
    rule(READ, ['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
    rule(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
    rule(READ, ['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies']),
  ];
}

function editRules(): PolicyRule[] {
  return [
    rule(['impersonate'], [''], ['serviceaccounts']),
    rule(WRITE, [''], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
    rule(['create'], [''], ['pods/eviction']),
    rule(READ, [''], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets',
      'services/proxy']),
    rule(WRITE, [''], ['configmaps', 'events', 'persistentvolumeclaims', 'replicationcontrollers',
      'replicationcontrollers/scale', 'secrets', 'serviceaccounts', 'services',
      'services/proxy']),
    rule(['create'], [''], ['serviceaccounts/token']),
    rule(WRITE, ['apps'], ['daemonsets', 'deployments', 'deployments/rollback',
      'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets',
      'statefulsets/scale']),
    rule(WRITE, ['autoscaling'], ['horizontalpodautoscalers']),
    rule(WRITE, ['batch'], ['cronjobs', 'jobs']),
    rule(WRITE, ['policy'], ['poddisruptionbudgets']),
    rule(WRITE, ['networking.k8s.io'], ['ingresses', 'networkpolicies']),
    rule(WRITE, ['discovery.k8s.io'], ['endpointslices']),
  ];
}

function adminRules(): PolicyRule[] {
  return [
    rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
    rule([...READ, ...WRITE], ['rbac.authorization.k8s.io'], ['rolebindings', 'roles']),
  ];
}

function schedulerRules(): PolicyRule[] {
  return [
    ...EVENTS,
    rule(['create'], ['coordination.k8s.io'], ['leases']),
    rule(['get', 'update'], ['coordination.k8s.io'], ['leases'], ['kube-scheduler']),
    rule(READ, [''], ['nodes', 'namespaces', 'replicationcontrollers', 'services',
      'persistentvolumeclaims', 'persistentvolumes']),
    rule(['delete', 'get', 'list', 'watch'], [''], ['pods']),
    rule(['create'], [''], ['bindings', 'pods/binding']),
    rule(['patch', 'update'], [''], ['pods/status']),
    rule(READ, ['apps'], ['replicasets', 'statefulsets']),
    rule(READ, ['policy'], ['poddisruptionbudgets']),
    rule(READ, ['storage.k8s.io'], ['csinodes', 'csidrivers', 'csistoragecapacities',
      'storageclasses']),
    rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
    rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
  ];
}

function controllerManagerRules(): PolicyRule[] {
  const ALL_VERBS = [...READ, ...WRITE];
  return [
    ...EVENTS,
    rule(ALL_VERBS, [''], ['pods', 'pods/status', 'pods/binding', 'services', 'services/status',
      'endpoints', 'nodes', 'nodes/status', 'namespaces', 'namespaces/status',
      'namespaces/finalize', 'serviceaccounts', 'configmaps', 'secrets', 'events']),
    rule(ALL_VERBS, ['apps'], ['deployments', 'deployments/status', 'deployments/scale',
      'replicasets', 'replicasets/status', 'replicasets/scale', 'daemonsets',
      'daemonsets/status', 'statefulsets', 'statefulsets/status', 'controllerrevisions']),
    rule(ALL_VERBS, ['discovery.k8s.io'], ['endpointslices']),
    rule(ALL_VERBS, ['coordination.k8s.io'], ['leases']),
    rule(ALL_VERBS, ['batch'], ['jobs', 'jobs/status', 'cronjobs', 'cronjobs/status']),
    rule(READ, ['*'], ['*']),
    rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
    rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
  ];
}

function nodeRules(): PolicyRule[] {
  return [
    rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
    rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews',
      'subjectaccessreviews']),
    rule(READ, [''], ['services', 'endpoints']),
    rule(READ, ['discovery.k8s.io'], ['endpointslices']),
    rule(['create', 'get', 'list', 'watch', 'patch', 'update'], [''], ['nodes']),
    rule(['patch', 'update'], [''], ['nodes/status']),
    ...EVENTS,
    rule(READ, [''], ['pods']),
    rule(['create', 'delete'], [''], ['pods']),
    rule(['patch', 'update'], [''], ['pods/status']),
    rule(['create'], [''], ['pods/eviction']),
    rule(READ, [''], ['configmaps', 'secrets']),
    rule(['get'], [''], ['persistentvolumeclaims', 'persistentvolumes']),
    rule(['create'], [''], ['serviceaccounts/token']),
    rule(['create', 'delete', 'get', 'patch', 'update'], ['coordination.k8s.io'], ['leases']),
    rule(READ, ['node.k8s.io'], ['runtimeclasses']),
    rule(READ, ['storage.k8s.io'], ['csidrivers']),
    rule(['get'], ['storage.k8s.io'], ['volumeattachments', 'csinodes']),
  ];
}

function proxierRules(): PolicyRule[] {
  return [
    rule(['list', 'watch'], [''], ['endpoints', 'services']),
    rule(READ, [''], ['nodes']),
    ...EVENTS,
    rule(['list', 'watch'], ['discovery.k8s.io'], ['endpointslices']),
  ];
}

const PUBLIC_INFO = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

/** ClusterRoles and ClusterRoleBindings to store at first start (upstream names). */
export function bootstrapRbacObjects(): KubeObject[] {
  const authenticated = group('system:authenticated');
  return [
    clusterRole('cluster-admin', [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
    clusterRole('system:discovery', [urls(['get'], [...PUBLIC_INFO, '/api', '/api/*', '/apis',
      '/apis/*', '/openapi', '/openapi/*'])]),
    clusterRole('system:public-info-viewer', [urls(['get'], PUBLIC_INFO)]),
    clusterRole('system:basic-user', [
      rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews',
        'selfsubjectrulesreviews']),
      rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
    ]),
    clusterRole('admin', [], {}, `${AGG}admin`),
    clusterRole('edit', [], { [`${AGG}admin`]: 'true' }, `${AGG}edit`),
    clusterRole('view', [], { [`${AGG}edit`]: 'true' }, `${AGG}view`),
    clusterRole('system:aggregate-to-admin', adminRules(), { [`${AGG}admin`]: 'true' }),
    clusterRole('system:aggregate-to-edit', editRules(), { [`${AGG}edit`]: 'true' }),
    clusterRole('system:aggregate-to-view', viewRules(), { [`${AGG}view`]: 'true' }),
    clusterRole('system:kube-scheduler', schedulerRules()),
    clusterRole('system:kube-controller-manager', controllerManagerRules()),
    clusterRole('system:node', nodeRules()),
    clusterRole('system:node-proxier', proxierRules()),
    binding('cluster-admin', 'cluster-admin', [group('system:masters')]),
    binding('system:discovery', 'system:discovery', [authenticated]),
    binding('system:basic-user', 'system:basic-user', [authenticated]),
    binding('system:public-info-viewer', 'system:public-info-viewer',
      [authenticated, group('system:unauthenticated')]),
    binding('system:kube-scheduler', 'system:kube-scheduler', [user('system:kube-scheduler')]),
    binding('system:kube-controller-manager', 'system:kube-controller-manager',
      [user('system:kube-controller-manager')]),
    binding('system:node', 'system:node', [group('system:nodes')]),
    binding('system:node-proxier', 'system:node-proxier', [user('system:kube-proxy')]),
  ];
}
