// The default RBAC policy written at first start, after upstream's bootstrap policy
// (plugin/pkg/auth/authorizer/rbac/bootstrappolicy). Differences, each for a kdp reason:
// - kube-proxy's identity is kubeadm's: ServiceAccount kube-system/kube-proxy bound to
//   `system:node-proxier` by `kubeadm:node-proxier` (kdp's bootstrap plays kubeadm's part);
// - `system:kube-controller-manager` holds what all of kdp's controllers need, because kdp runs
//   them under one identity (upstream gives each controller its own ServiceAccount role);
// - kubeadm's TLS-bootstrap bindings (`kubeadm:kubelet-bootstrap`, `kubeadm:node-autoapprove-*`,
//   `kubeadm:get-nodes`) are part of it, since kdp plays kubeadm's part;
// - `kdp:node-agent` (ServiceAccount kube-system/kdp-node-agent): the cluster-wide reads of a
//   joined host's kube-proxy and NetworkPolicy agent, which run inside its node agent (kubeadm
//   runs them as DaemonSet pods with their own ServiceAccounts); `kdp node join` gets its token
//   with the bootstrap token, which may create tokens for that one ServiceAccount.
import type { KubeObject } from '../../client/types.js';
import {
  adminRules, controllerManagerRules, csrAutoApproveRules, editRules, nodeBootstrapperRules,
  nodeRules, proxierRules, rule, schedulerRules, urls, viewRules,
} from './bootstrap-rules.js';
import type { PolicyRule, Subject } from './rules.js';
import { KUBEADM_NODE_TOKEN_GROUP } from '../../bootstrap/token.js';

const RBAC_V1 = 'rbac.authorization.k8s.io/v1';

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
    ...(subjects.length > 0 ? { subjects: subjects.map((s) => s.kind === 'ServiceAccount' ? s
      : { apiGroup: 'rbac.authorization.k8s.io', ...s }) } : {}),
  };
}

const group = (name: string): Subject => ({ kind: 'Group', name });
const user = (name: string): Subject => ({ kind: 'User', name });

const AGG = 'rbac.authorization.k8s.io/aggregate-to-';

const PUBLIC_INFO = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

/** RBAC objects (and the node agent's ServiceAccount) to store at first start (upstream names). */
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
    // No subjects, as upstream: nodes are authorized by the Node authorizer, which applies
    // these rules to what it does not subdivide.
    binding('system:node', 'system:node', []),
    binding('system:node-proxier', 'system:node-proxier', [user('system:kube-proxy')]),
    binding('kubeadm:node-proxier', 'system:node-proxier', [{ kind: 'ServiceAccount',
      name: 'kube-proxy', namespace: 'kube-system' }]),
    ...tlsBootstrapRbac(),
  ];
}

/** Upstream's CSR roles and kubeadm's bindings of them (phases/bootstraptoken/node). */
function tlsBootstrapRbac(): KubeObject[] {
  const tokens = group(KUBEADM_NODE_TOKEN_GROUP);
  const nodeclient = 'system:certificates.k8s.io:certificatesigningrequests:nodeclient';
  const selfnodeclient = 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient';
  return [
    clusterRole('system:node-bootstrapper', nodeBootstrapperRules()),
    clusterRole(nodeclient, csrAutoApproveRules('nodeclient')),
    clusterRole(selfnodeclient, csrAutoApproveRules('selfnodeclient')),
    clusterRole('kubeadm:get-nodes', [rule(['get'], [''], ['nodes'])]),
    binding('kubeadm:kubelet-bootstrap', 'system:node-bootstrapper', [tokens]),
    binding('kubeadm:node-autoapprove-bootstrap', nodeclient, [tokens]),
    binding('kubeadm:node-autoapprove-certificate-rotation', selfnodeclient, [group('system:nodes')]),
    binding('kubeadm:get-nodes', 'kubeadm:get-nodes', [tokens]),
    ...nodeAgentObjects(tokens),
  ];
}

export const NODE_AGENT_SERVICE_ACCOUNT = 'kdp-node-agent';

/** The joined host's in-agent kube-proxy and policy agent identity (see the module comment). */
function nodeAgentObjects(tokens: Subject): KubeObject[] {
  const ns = 'kube-system';
  const sa: Subject = { kind: 'ServiceAccount', name: NODE_AGENT_SERVICE_ACCOUNT, namespace: ns };
  const rbac = 'rbac.authorization.k8s.io';
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: NODE_AGENT_SERVICE_ACCOUNT, namespace: ns } },
    clusterRole('kdp:node-agent', [
      rule(['get', 'list', 'watch'], [''], ['pods', 'namespaces', 'services', 'nodes', 'endpoints']),
      rule(['get', 'list', 'watch'], ['discovery.k8s.io'], ['endpointslices']),
      rule(['get', 'list', 'watch'], ['networking.k8s.io'], ['networkpolicies', 'servicecidrs']),
      rule(['create', 'patch', 'update'], ['', 'events.k8s.io'], ['events']),
    ]),
    binding('kdp:node-agent', 'kdp:node-agent', [sa]),
    // Least privilege: of the DaemonSets only the two the agent asks about (whether kube-proxy
    // runs as pods; kdp-cni's pod network), in kube-system.
    { apiVersion: RBAC_V1, kind: 'Role', metadata: { ...meta('kdp:node-agent-daemonsets'), namespace: ns },
      rules: [rule(['get'], ['apps'], ['daemonsets'], ['kube-proxy', 'kdp-cni'])] },
    { apiVersion: RBAC_V1, kind: 'RoleBinding', metadata: { ...meta('kdp:node-agent-daemonsets'), namespace: ns },
      roleRef: { apiGroup: rbac, kind: 'Role', name: 'kdp:node-agent-daemonsets' }, subjects: [sa] },
    { apiVersion: RBAC_V1, kind: 'Role', metadata: { ...meta('kdp:node-agent-token'), namespace: ns },
      rules: [rule(['create'], [''], ['serviceaccounts/token'], [NODE_AGENT_SERVICE_ACCOUNT])] },
    { apiVersion: RBAC_V1, kind: 'RoleBinding', metadata: { ...meta('kdp:node-agent-token'), namespace: ns },
      roleRef: { apiGroup: rbac, kind: 'Role', name: 'kdp:node-agent-token' },
      subjects: [{ apiGroup: rbac, ...tokens }] },
  ];
}
