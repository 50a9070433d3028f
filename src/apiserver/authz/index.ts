// Authorization: `AlwaysAllow` or `RBAC` (with upstream's privileged-group short cut: members
// of `system:masters` are allowed everything, before RBAC is asked).

import { kdpError, type KdpError } from '../../errors.js';
import type { AuthzAttributes, AuthzDecision, Authorizer } from '../pipeline-types.js';
import { buildRbacAuthorizer, type RbacSource } from './rbac.js';

export { bootstrapRbacObjects } from './bootstrap.js';
export {
  attributesFromSpec, evaluateAccessReview, userFromSpec, type AccessReviewSpec,
  type AccessReviewStatus,
} from './access-review.js';
export { ruleAllows, type PolicyRule, type Subject, type RoleRef } from './rules.js';
export type { RbacResource, RbacSource } from './rbac.js';

export type AuthorizationMode = 'AlwaysAllow' | 'RBAC';

export interface AuthorizerOptions {
  readonly mode: AuthorizationMode;
  /** Required for RBAC. */
  readonly source?: RbacSource;
}

export const PRIVILEGED_GROUP = 'system:masters';

export function buildAuthorizer(opts: AuthorizerOptions): Authorizer {
  if (opts.mode === 'AlwaysAllow') {
    return { authorize: async () => ({ allowed: true, reason: '' }) };
  }
  if (!opts.source) throw kdpError('KDP_CONFIG', 'RBAC authorization needs a source of roles');
  const rbac = buildRbacAuthorizer(opts.source);
  return {
    async authorize(attrs: AuthzAttributes): Promise<AuthzDecision> {
      if (attrs.user.groups.includes(PRIVILEGED_GROUP)) return { allowed: true, reason: '' };
      return rbac.authorize(attrs);
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
