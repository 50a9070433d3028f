// The joined hosts' in-agent kube-proxy and policy agent (ServiceAccount kube-system/kdp-node-agent)
// under the default RBAC policy: the cluster-wide reads they run on, and nothing more — of the
// DaemonSets only kube-proxy and kdp-cni in kube-system, no Secrets, no writes but Events.

import { describe, expect, it } from 'vitest';
import { buildRbacAuthorizer } from '../../../src/apiserver/authz/rbac.js';
import { bootstrapRbacObjects, NODE_AGENT_SERVICE_ACCOUNT } from '../../../src/apiserver/authz/bootstrap.js';
import type { AuthzAttributes, UserInfo } from '../../../src/apiserver/pipeline-types.js';
import { memorySource } from './rbac-source.js';

const agent: UserInfo = { name: `system:serviceaccount:kube-system:${NODE_AGENT_SERVICE_ACCOUNT}`,
  groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'] };
const authz = buildRbacAuthorizer(memorySource(bootstrapRbacObjects()));
const can = async (verb: string, apiGroup: string, resource: string, more: Partial<AuthzAttributes> = {}) =>
  (await authz.authorize({ user: agent, verb, resourceRequest: true, apiGroup, resource, ...more })).allowed;

describe('kdp-node-agent RBAC', () => {
  it('reads what kube-proxy and the policy agent watch', async () => {
    for (const r of ['pods', 'namespaces', 'services', 'nodes', 'endpoints']) expect(await can('watch', '', r), r).toBe(true);
    expect(await can('list', 'discovery.k8s.io', 'endpointslices')).toBe(true);
    expect(await can('list', 'networking.k8s.io', 'networkpolicies')).toBe(true);
    expect(await can('create', '', 'events', { namespace: 'default' })).toBe(true);
  });

  it('gets only the kube-proxy and kdp-cni DaemonSets in kube-system', async () => {
    for (const name of ['kube-proxy', 'kdp-cni']) {
      expect(await can('get', 'apps', 'daemonsets', { namespace: 'kube-system', name }), name).toBe(true);
    }
    expect(await can('get', 'apps', 'daemonsets', { namespace: 'kube-system', name: 'other' })).toBe(false);
    expect(await can('get', 'apps', 'daemonsets', { namespace: 'default', name: 'kube-proxy' })).toBe(false);
    expect(await can('list', 'apps', 'daemonsets', { namespace: 'kube-system' })).toBe(false);
  });

  it('may not read Secrets or change what it watches', async () => {
    expect(await can('get', '', 'secrets', { namespace: 'kube-system', name: 'x' })).toBe(false);
    expect(await can('list', '', 'secrets')).toBe(false);
    expect(await can('update', '', 'nodes', { name: 'n1' })).toBe(false);
    expect(await can('patch', '', 'pods', { namespace: 'default', name: 'p' })).toBe(false);
    expect(await can('create', '', 'serviceaccounts/token', { namespace: 'kube-system', name: NODE_AGENT_SERVICE_ACCOUNT }))
      .toBe(false);
  });
});
