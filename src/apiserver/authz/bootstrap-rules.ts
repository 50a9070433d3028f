// The rule sets of kdp's bootstrap ClusterRoles (see bootstrap.ts for the reasons kdp differs
// from upstream's bootstrappolicy).

import type { PolicyRule } from './rules.js';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

export function rule(verbs: string[], apiGroups: string[], resources: string[],
  resourceNames?: string[]): PolicyRule {
  return { verbs, apiGroups, resources, ...(resourceNames ? { resourceNames } : {}) };
}

export function urls(verbs: string[], nonResourceURLs: string[]): PolicyRule {
  return { verbs, nonResourceURLs };
}

const EVENTS = [rule(['create', 'patch', 'update'], ['', 'events.k8s.io'], ['events'])];

export function viewRules(): PolicyRule[] {
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

export function editRules(): PolicyRule[] {
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

export function adminRules(): PolicyRule[] {
  return [
    rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
    rule([...READ, ...WRITE], ['rbac.authorization.k8s.io'], ['rolebindings', 'roles']),
  ];
}

export function schedulerRules(): PolicyRule[] {
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

export function controllerManagerRules(): PolicyRule[] {
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
    // csrapproving, csrsigning, csrcleaner.
    rule(['delete'], ['certificates.k8s.io'], ['certificatesigningrequests']),
    rule(['update'], ['certificates.k8s.io'], ['certificatesigningrequests/approval',
      'certificatesigningrequests/status']),
    rule(['approve', 'sign'], ['certificates.k8s.io'], ['signers']),
    rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
    rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
  ];
}

export function nodeRules(): PolicyRule[] {
  return [
    rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
    rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews',
      'subjectaccessreviews']),
    rule(READ, [''], ['services']),
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
    // Client certificate rotation (the kubelet's own CSRs).
    rule(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests']),
    rule(READ, ['storage.k8s.io'], ['csidrivers']),
    rule(['get'], ['storage.k8s.io'], ['volumeattachments', 'csinodes']),
  ];
}

export function proxierRules(): PolicyRule[] {
  return [
    rule(['list', 'watch'], [''], ['endpoints', 'services']),
    rule(READ, [''], ['nodes']),
    ...EVENTS,
    rule(['list', 'watch'], ['discovery.k8s.io'], ['endpointslices']),
    // MultiCIDRServiceAllocator (GA in 1.33): kube-proxy reads the ServiceCIDRs.
    rule(['list', 'watch'], ['networking.k8s.io'], ['servicecidrs']),
  ];
}

const CSR_GROUP = 'certificates.k8s.io';

/** upstream system:node-bootstrapper: what a TLS-bootstrapping kubelet does with its CSR. */
export function nodeBootstrapperRules(): PolicyRule[] {
  return [rule(['create', 'get', 'list', 'watch'], [CSR_GROUP], ['certificatesigningrequests'])];
}

/** The permission csrapproving checks (SubjectAccessReview) before auto-approving: `nodeclient`
 *  for a new node's first certificate, `selfnodeclient` for a node renewing its own. */
export function csrAutoApproveRules(subresource: 'nodeclient' | 'selfnodeclient'): PolicyRule[] {
  return [rule(['create'], [CSR_GROUP], [`certificatesigningrequests/${subresource}`])];
}
