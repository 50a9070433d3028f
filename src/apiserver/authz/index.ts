// Authorization as kube-apiserver's `--authorization-mode` list (default `Node,RBAC`): upstream's
// privileged-group short cut first (members of `system:masters` are allowed everything), then
// each mode in order until one allows (upstream's union authorizer; refusal reasons are joined
// with newlines). Modes: `AlwaysAllow`, `Node` (node identities, see node.ts), `RBAC`.

import { kdpError, type KdpError } from '../../errors.js';
import type {
  AuthzAttributes, AuthzDecision, Authorizer, UserInfo, UserRules,
} from '../pipeline-types.js';
import { nodeRules } from './bootstrap-rules.js';
import type { NodeRelations } from './node-graph.js';
import { buildNodeAuthorizer, nodeIdentity } from './node.js';
import { buildRbacAuthorizer, type RbacSource } from './rbac.js';

export { bootstrapRbacObjects } from './bootstrap.js';
export {
  attributesFromSpec, evaluateAccessReview, userFromSpec, type AccessReviewSpec,
  type AccessReviewStatus,
} from './access-review.js';
export { ruleAllows, type PolicyRule, type Subject, type RoleRef } from './rules.js';
export type { RbacResource, RbacSource } from './rbac.js';

export { buildNodeAuthorizer, nodeIdentity, NODE_USER_PREFIX, NODES_GROUP } from './node.js';
export { NodeGraph, podReferences, type NodeRelations } from './node-graph.js';
export { buildStoreNodeGraph, type StoreNodeGraph } from './node-graph-store.js';

export type AuthorizerKind = 'AlwaysAllow' | 'Node' | 'RBAC';
/** One mode or a comma-separated list of them, e.g. `Node,RBAC`. */
export type AuthorizationMode = string;

export const DEFAULT_AUTHORIZATION_MODE = 'Node,RBAC';
const KINDS: readonly AuthorizerKind[] = ['AlwaysAllow', 'Node', 'RBAC'];

/** Parses `--authorization-mode` (KDP_CONFIG for an unknown or repeated mode, or none). */
export function parseAuthorizationModes(text: string): AuthorizerKind[] {
  const modes = text.split(',').map((m) => m.trim());
  const seen = new Set<string>();
  for (const m of modes) {
    if (!KINDS.includes(m as AuthorizerKind)) {
      throw kdpError('KDP_CONFIG', `--authorization-mode: "${m}" is not one of ` +
        `${KINDS.join(', ')}`);
    }
    if (seen.has(m)) throw kdpError('KDP_CONFIG', `--authorization-mode: "${m}" given twice`);
    seen.add(m);
  }
  return modes as AuthorizerKind[];
}

export interface AuthorizerOptions {
  readonly mode: AuthorizationMode;
  /** Required for RBAC. */
  readonly source?: RbacSource;
  /** Required for Node: which objects relate to which node (see buildStoreNodeGraph). */
  readonly nodeGraph?: NodeRelations & { ready?(): Promise<void> };
}

export const PRIVILEGED_GROUP = 'system:masters';

const ALL_RULES: UserRules = { resourceRules: [{ verbs: ['*'], apiGroups: ['*'],
  resources: ['*'] }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
incomplete: false };

/** The Node authorizer's RulesFor: nodes' rights are not enumerable (upstream's words). */
async function nodeRulesFor(user: UserInfo): Promise<UserRules> {
  return nodeIdentity(user) === undefined ? { resourceRules: [], nonResourceRules: [],
    incomplete: false } : { resourceRules: [], nonResourceRules: [], incomplete: true,
    evaluationError: 'node authorizer does not support user rule resolution' };
}

function buildOne(kind: AuthorizerKind, opts: AuthorizerOptions): Authorizer {
  switch (kind) {
    case 'AlwaysAllow':
      return { authorize: async () => ({ allowed: true, reason: '' }),
        rulesFor: async () => ALL_RULES };
    case 'RBAC':
      if (!opts.source) throw kdpError('KDP_CONFIG', 'RBAC authorization needs a source of roles');
      return buildRbacAuthorizer(opts.source);
    case 'Node':
      if (!opts.nodeGraph) {
        throw kdpError('KDP_CONFIG', 'Node authorization needs the graph of pods and nodes');
      }
      return { ...buildNodeAuthorizer({ graph: opts.nodeGraph, rules: nodeRules() }),
        rulesFor: nodeRulesFor };
  }
}

export function buildAuthorizer(opts: AuthorizerOptions): Authorizer {
  const all = parseAuthorizationModes(opts.mode).map((k) => buildOne(k, opts));
  return {
    async authorize(attrs: AuthzAttributes): Promise<AuthzDecision> {
      if (attrs.user.groups.includes(PRIVILEGED_GROUP)) return { allowed: true, reason: '' };
      const reasons: string[] = [];
      for (const a of all) {
        const d = await a.authorize(attrs);
        if (d.allowed) return d;
        if (d.reason) reasons.push(d.reason);
      }
      return { allowed: false, reason: reasons.join('\n') };
    },
    // Upstream's union RuleResolver: the modes' rules together (the privileged-group short
    // cut is not a rule resolver: system:masters see what RBAC binds to them).
    async rulesFor(user: UserInfo, namespace: string): Promise<UserRules> {
      const resourceRules: Array<UserRules['resourceRules'][number]> = [];
      const nonResourceRules: Array<UserRules['nonResourceRules'][number]> = [];
      const errors: string[] = [];
      let incomplete = false;
      for (const a of all) {
        if (!a.rulesFor) continue;
        const r = await a.rulesFor(user, namespace);
        resourceRules.push(...r.resourceRules);
        nonResourceRules.push(...r.nonResourceRules);
        incomplete ||= r.incomplete;
        if (r.evaluationError) errors.push(r.evaluationError);
      }
      return { resourceRules, nonResourceRules, incomplete, ...(errors.length === 0 ? {}
        : { evaluationError: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` }) };
    },
  };
}

/** The text after "forbidden: " in upstream's 403 (responsewriters.forbiddenMessage). */
export function forbiddenMessage(attrs: AuthzAttributes): string {
  const who = JSON.stringify(attrs.user.name);
  if (!attrs.resourceRequest) {
    return `User ${who} cannot ${attrs.verb} path ${JSON.stringify(attrs.path ?? '')}`;
  }
  const res = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const head = `User ${who} cannot ${attrs.verb} resource ${JSON.stringify(res ?? '')} in API ` +
    `group ${JSON.stringify(attrs.apiGroup ?? '')}`;
  return attrs.namespace ? `${head} in the namespace ${JSON.stringify(attrs.namespace)}`
    : `${head} at the cluster scope`;
}

/**
 * The KDP_FORBIDDEN error the API server answers a denied request with, worded as upstream:
 * `pods "x" is forbidden: User "jane" cannot get resource "pods" in API group "" in the
 * namespace "default"` (plus `: <reason>` when the authorizer gave one).
 */
export function forbiddenError(attrs: AuthzAttributes, decision: AuthzDecision): KdpError {
  const why = decision.reason ? `${forbiddenMessage(attrs)}: ${decision.reason}`
    : forbiddenMessage(attrs);
  const resource = attrs.resourceRequest ? (attrs.resource ?? '') : '';
  const qualified = attrs.apiGroup ? `${resource}.${attrs.apiGroup}` : resource;
  let message: string;
  if (qualified === '') message = `forbidden: ${why}`;
  else if (!attrs.name) message = `${qualified} is forbidden: ${why}`;
  else message = `${qualified} ${JSON.stringify(attrs.name)} is forbidden: ${why}`;
  return kdpError('KDP_FORBIDDEN', message, {
    ...(attrs.name ? { name: attrs.name } : {}),
    ...(attrs.apiGroup ? { group: attrs.apiGroup } : {}),
    ...(resource ? { kind: resource } : {}),
  });
}
