// The Node authorizer, as upstream's plugin/pkg/auth/authorizer/node/node_authorizer.go with
// AuthorizeNodeWithSelectors (on by default since 1.32): requests of a node identity
// (`system:node:<name>` in group `system:nodes`) to secrets, configmaps, PVCs and service
// account tokens are allowed only for objects related to the node through a pod bound to it;
// its own Node and Lease only; pods listed/watched only with `spec.nodeName=<node>`; other
// resources by the static `system:node` rules. Every refusal is "no opinion" (the next
// authorizer, RBAC, may still allow), with upstream's reason words.

import type { AuthzAttributes, AuthzDecision, Authorizer, UserInfo } from '../pipeline-types.js';
import type { NodeRelations, VertexType } from './node-graph.js';
import { ruleAllows, type PolicyRule } from './rules.js';

export const NODE_USER_PREFIX = 'system:node:';
export const NODES_GROUP = 'system:nodes';
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** nodeidentifier.NodeIdentity: the node name, '' for an unidentifiable node, undefined for
 *  users that are not nodes. */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.name.startsWith(NODE_USER_PREFIX)) return undefined;
  if (!user.groups.includes(NODES_GROUP)) return undefined;
  return user.name.slice(NODE_USER_PREFIX.length);
}

export interface NodeAuthorizerOptions {
  /** The pod relationships (kept current from the store). */
  readonly graph: NodeRelations & { ready?(): Promise<void> };
  /** The static rules for resources that are not subdivided (upstream NodeRules()). */
  readonly rules: readonly PolicyRule[];
}

const ALLOW: AuthzDecision = { allowed: true, reason: '' };
const noOpinion = (reason = ''): AuthzDecision => ({ allowed: false, reason });

export function buildNodeAuthorizer(o: NodeAuthorizerOptions): Authorizer {
  const { graph } = o;

  const related = (node: string, type: VertexType, a: AuthzAttributes): AuthzDecision => {
    if (!a.name) return noOpinion('No Object name found');
    return graph.hasPath(node, type, a.namespace ?? '', a.name) ? ALLOW
      : noOpinion(`no relationship found between node '${node}' and this object`);
  };

  const readNamespaced = (node: string, type: VertexType, a: AuthzAttributes) => {
    if (!['get', 'list', 'watch'].includes(a.verb)) {
      return noOpinion('can only read resources of this type');
    }
    if (a.subresource) return noOpinion('cannot read subresource');
    if (!a.namespace) return noOpinion('can only read namespaced object of this type');
    return related(node, type, a);
  };

  const getOnly = (node: string, type: VertexType, a: AuthzAttributes) => {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (a.subresource) return noOpinion('cannot get subresource');
    return related(node, type, a);
  };

  const statusUpdate = (node: string, type: VertexType, a: AuthzAttributes) => {
    if (a.verb !== 'update' && a.verb !== 'patch') {
      return noOpinion('can only get/update/patch this type');
    }
    return related(node, type, a);
  };

  const createToken = (node: string, a: AuthzAttributes) => {
    if (a.verb !== 'create' || !a.name) {
      return noOpinion('can only create tokens for individual service accounts');
    }
    if (a.subresource !== 'token') {
      return noOpinion('can only create token subresource of serviceaccount');
    }
    return related(node, 'serviceaccount', a);
  };

  const lease = (node: string, a: AuthzAttributes) => {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) {
      return noOpinion('can only get, create, update, patch, or delete a node lease');
    }
    if (a.namespace !== NODE_LEASE_NAMESPACE) {
      return noOpinion(`can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
    }
    // The name of a create is checked by NodeRestriction (the authorizer does not see it).
    if (a.verb !== 'create' && a.name !== node) {
      return noOpinion('can only access node lease with the same name as the requesting node');
    }
    return ALLOW;
  };

  const nodeObject = (node: string, a: AuthzAttributes): AuthzDecision => {
    const sub = a.subresource ?? '';
    if (sub === '' && ['create', 'update', 'patch'].includes(a.verb)) return ALLOW;
    if (sub === '' && ['get', 'list', 'watch'].includes(a.verb)) {
      // By name (a list/watch's name comes from its metadata.name field selector), so a
      // kubelet may read its Node before creating it.
      if (a.name === node) return ALLOW;
      if (!a.name) {
        return noOpinion(`node '${node}' cannot read all nodes, only its own Node object`);
      }
      return noOpinion(`node '${node}' cannot read '${a.name}', only its own Node object`);
    }
    if (sub === 'status' && (a.verb === 'update' || a.verb === 'patch')) return ALLOW;
    return noOpinion();
  };

  const pod = (node: string, a: AuthzAttributes): AuthzDecision => {
    const sub = a.subresource ?? '';
    if (sub === '') {
      if (a.verb === 'get') return getOnly(node, 'pod', a);
      if (a.verb === 'list' || a.verb === 'watch') {
        const scoped = (a.fieldSelector ?? []).some((r) => r.field === 'spec.nodeName' &&
          r.operator === '=' && r.value === node);
        if (scoped) return ALLOW;
        if (a.name) return related(node, 'pod', a);
        return noOpinion('can only list/watch pods with spec.nodeName field selector');
      }
      // Mirror pods; NodeRestriction limits them to pods bound to the node.
      if (a.verb === 'create' || a.verb === 'delete') return ALLOW;
    }
    if (sub === 'status' && (a.verb === 'update' || a.verb === 'patch')) return ALLOW;
    if (sub === 'eviction' && a.verb === 'create') return ALLOW;
    return noOpinion();
  };

  const decide = (node: string, a: AuthzAttributes): AuthzDecision => {
    if (a.resourceRequest) {
      const g = a.apiGroup ?? '';
      switch (`${a.resource ?? ''}.${g}`) {
        case 'secrets.': return readNamespaced(node, 'secret', a);
        case 'configmaps.': return readNamespaced(node, 'configmap', a);
        case 'persistentvolumeclaims.':
          return a.subresource === 'status' ? statusUpdate(node, 'pvc', a)
            : getOnly(node, 'pvc', a);
        case 'persistentvolumes.': return getOnly(node, 'pv', a);
        case 'serviceaccounts.': return createToken(node, a);
        case 'leases.coordination.k8s.io': return lease(node, a);
        case 'nodes.': return nodeObject(node, a);
        case 'pods.': return pod(node, a);
      }
    }
    return o.rules.some((r) => ruleAllows(a, r)) ? ALLOW : noOpinion();
  };

  return {
    async authorize(a: AuthzAttributes): Promise<AuthzDecision> {
      const node = nodeIdentity(a.user);
      if (node === undefined) return noOpinion();
      if (node === '') return noOpinion(`unknown node for user "${a.user.name}"`);
      await graph.ready?.();
      return decide(node, a);
    },
  };
}
