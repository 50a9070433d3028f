// The RBAC authorizer: ClusterRoleBindings first, then the RoleBindings of the request's
// namespace, as upstream's RBACAuthorizer (plugin/pkg/auth/authorizer/rbac). Reasons use
// upstream's words: `RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`
// on allow; on deny the reason is empty unless a binding referred to a missing role.

import type { KubeObject } from '../../client/types.js';
import type { AuthzAttributes, AuthzDecision, Authorizer } from '../pipeline-types.js';
import { selectorMatches, type LabelSelector } from './label-selector.js';
import {
  appliesToUser, describeSubject, ruleAllows, type PolicyRule, type RoleRef, type Subject,
} from './rules.js';

export type RbacResource = 'roles' | 'rolebindings' | 'clusterroles' | 'clusterrolebindings';

/** Where the authorizer reads RBAC objects (the API server passes its storage). */
export interface RbacSource {
  list(resource: RbacResource, namespace?: string): Promise<KubeObject[]>;
}

interface RoleLike extends KubeObject {
  rules?: PolicyRule[];
  aggregationRule?: { clusterRoleSelectors?: LabelSelector[] };
}
interface BindingLike extends KubeObject {
  subjects?: Subject[];
  roleRef: RoleRef;
}

/** The request-scoped view of the source: each list is read at most once per decision. */
class RequestView {
  private readonly cache = new Map<string, Promise<KubeObject[]>>();
  constructor(private readonly source: RbacSource) {}

  list(resource: RbacResource, namespace?: string): Promise<KubeObject[]> {
    const key = `${resource}/${namespace ?? ''}`;
    let p = this.cache.get(key);
    if (!p) {
      p = this.source.list(resource, namespace);
      this.cache.set(key, p);
    }
    return p;
  }

  async clusterRoleRules(name: string, seen = new Set<string>()): Promise<PolicyRule[]> {
    const all = (await this.list('clusterroles')) as RoleLike[];
    const role = all.find((r) => r.metadata.name === name);
    if (!role) throw new Error(`clusterrole.rbac.authorization.k8s.io "${name}" not found`);
    seen.add(name);
    const rules = [...(role.rules ?? [])];
    // Aggregation is resolved here rather than by a controller writing `rules`.
    for (const sel of role.aggregationRule?.clusterRoleSelectors ?? []) {
      for (const other of all) {
        const n = other.metadata.name ?? '';
        if (seen.has(n) || !selectorMatches(sel, other.metadata.labels)) continue;
        rules.push(...(await this.clusterRoleRules(n, seen)));
      }
    }
    return rules;
  }

  async roleRules(ref: RoleRef, namespace: string): Promise<PolicyRule[]> {
    if (ref.kind === 'ClusterRole') return this.clusterRoleRules(ref.name);
    const roles = (await this.list('roles', namespace)) as RoleLike[];
    const role = roles.find((r) => r.metadata.name === ref.name);
    if (ref.kind !== 'Role' || !role) {
      throw new Error(`role.rbac.authorization.k8s.io "${ref.name}" not found`);
    }
    return role.rules ?? [];
  }
}

function aggregate(errors: string[]): string {
  return errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
}

async function visitBindings(
  view: RequestView, attrs: AuthzAttributes, bindings: BindingLike[], namespaced: boolean,
  errors: string[],
): Promise<string | undefined> {
  for (const b of bindings) {
    const ns = namespaced ? (b.metadata.namespace ?? '') : '';
    const subject = (b.subjects ?? []).find((s) => appliesToUser(attrs.user, s, ns));
    if (!subject) continue;
    let rules: PolicyRule[];
    try {
      rules = await view.roleRules(b.roleRef, ns);
    } catch (e) {
      errors.push((e as Error).message);
      continue;
    }
    if (rules.some((r) => ruleAllows(attrs, r))) {
      const what = namespaced ? `RoleBinding "${b.metadata.name}/${ns}"`
        : `ClusterRoleBinding "${b.metadata.name}"`;
      return `RBAC: allowed by ${what} of ${b.roleRef.kind} "${b.roleRef.name}" to ` +
        describeSubject(subject, ns);
    }
  }
  return undefined;
}

export function buildRbacAuthorizer(source: RbacSource): Authorizer {
  return {
    async authorize(attrs: AuthzAttributes): Promise<AuthzDecision> {
      const view = new RequestView(source);
      const errors: string[] = [];
      const crbs = (await view.list('clusterrolebindings')) as BindingLike[];
      let reason = await visitBindings(view, attrs, crbs, false, errors);
      if (reason === undefined && attrs.namespace) {
        const rbs = (await view.list('rolebindings', attrs.namespace)) as BindingLike[];
        reason = await visitBindings(view, attrs, rbs, true, errors);
      }
      if (reason !== undefined) return { allowed: true, reason };
      return { allowed: false, reason: errors.length > 0 ? `RBAC: ${aggregate(errors)}` : '' };
    },
  };
}
