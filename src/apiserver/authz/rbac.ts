// The RBAC authorizer: ClusterRoleBindings first, then the RoleBindings of the request's
// namespace, as upstream's RBACAuthorizer (plugin/pkg/auth/authorizer/rbac). Reasons use
// upstream's words: `RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`
// on allow; on deny the reason is empty unless a binding referred to a missing role.

import type { KubeObject } from '../../client/types.js';
import type {
  AuthzAttributes, AuthzDecision, Authorizer, UserInfo, UserRules,
} from '../pipeline-types.js';
import { selectorMatches, type LabelSelector } from './label-selector.js';
import {
  appliesToUser, describeSubject, ruleAllows, type PolicyRule, type RoleRef, type Subject,
} from './rules.js';

export type RbacResource = 'roles' | 'rolebindings' | 'clusterroles' | 'clusterrolebindings';

/** Where the authorizer reads RBAC objects (the API server passes its storage). */
export interface RbacSource {
  list(resource: RbacResource, namespace?: string): Promise<KubeObject[]>;
  /**
   * Optional: a number that changes whenever any RBAC object may have changed. With it, lists
   * and resolved role rules are kept across requests while it stays the same; without it,
   * every decision reads the source afresh.
   */
  generation?(): number;
}

interface RoleLike extends KubeObject {
  rules?: PolicyRule[];
  aggregationRule?: { clusterRoleSelectors?: LabelSelector[] };
}
interface BindingLike extends KubeObject {
  subjects?: Subject[];
  roleRef: RoleRef;
}

/**
 * A view of the source: each list is read at most once, and role rules (with aggregation) are
 * resolved once per role. Per decision without a generation; shared while it holds with one.
 */
class RbacView {
  private readonly cache = new Map<string, Promise<KubeObject[]>>();
  private readonly byName = new Map<string, Promise<Map<string, RoleLike>>>();
  private readonly clusterRules = new Map<string, Promise<PolicyRule[]>>();
  constructor(private readonly source: RbacSource) {}

  list(resource: RbacResource, namespace?: string): Promise<KubeObject[]> {
    const key = `${resource}/${namespace ?? ''}`;
    let p = this.cache.get(key);
    if (!p) {
      p = this.source.list(resource, namespace);
      this.cache.set(key, p);
      // A failed read is not remembered: the next decision asks again.
      p.catch(() => { if (this.cache.get(key) === p) this.cache.delete(key); });
    }
    return p;
  }

  private roleMap(resource: 'roles' | 'clusterroles', namespace?: string) {
    const key = `${resource}/${namespace ?? ''}`;
    let p = this.byName.get(key);
    if (!p) {
      p = this.list(resource, namespace).then((all) =>
        new Map(all.map((r) => [r.metadata.name ?? '', r as RoleLike])));
      this.byName.set(key, p);
      p.catch(() => { if (this.byName.get(key) === p) this.byName.delete(key); });
    }
    return p;
  }

  clusterRoleRules(name: string): Promise<PolicyRule[]> {
    let p = this.clusterRules.get(name);
    if (!p) {
      p = this.resolveClusterRole(name, new Set());
      this.clusterRules.set(name, p);
      p.catch(() => { if (this.clusterRules.get(name) === p) this.clusterRules.delete(name); });
    }
    return p;
  }

  private async resolveClusterRole(name: string, seen: Set<string>): Promise<PolicyRule[]> {
    const roles = await this.roleMap('clusterroles');
    const role = roles.get(name);
    if (!role) throw new Error(`clusterrole.rbac.authorization.k8s.io "${name}" not found`);
    seen.add(name);
    const rules = [...(role.rules ?? [])];
    // Aggregation is resolved here rather than by a controller writing `rules`.
    for (const sel of role.aggregationRule?.clusterRoleSelectors ?? []) {
      for (const other of roles.values()) {
        const n = other.metadata.name ?? '';
        if (seen.has(n) || !selectorMatches(sel, other.metadata.labels)) continue;
        rules.push(...(await this.resolveClusterRole(n, seen)));
      }
    }
    return rules;
  }

  async roleRules(ref: RoleRef, namespace: string): Promise<PolicyRule[]> {
    if (ref.kind === 'ClusterRole') return this.clusterRoleRules(ref.name);
    const role = (await this.roleMap('roles', namespace)).get(ref.name);
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
  view: RbacView, attrs: AuthzAttributes, bindings: BindingLike[], namespaced: boolean,
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
  let shared: { generation: number; view: RbacView } | undefined;
  const viewFor = (): RbacView => {
    if (!source.generation) return new RbacView(source);
    const generation = source.generation();
    if (shared?.generation !== generation) shared = { generation, view: new RbacView(source) };
    return shared.view;
  };
  return {
    async authorize(attrs: AuthzAttributes): Promise<AuthzDecision> {
      const view = viewFor();
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
    // Upstream's RBACAuthorizer.RulesFor: every rule of every role bound to the user, cluster
    // bindings first, then the namespace's; roles that cannot be resolved are the error.
    async rulesFor(user: UserInfo, namespace: string): Promise<UserRules> {
      const view = viewFor();
      const errors: string[] = [];
      const rules: PolicyRule[] = [];
      const collect = async (bindings: BindingLike[], namespaced: boolean) => {
        for (const b of bindings) {
          const ns = namespaced ? (b.metadata.namespace ?? '') : '';
          if (!(b.subjects ?? []).some((sub) => appliesToUser(user, sub, ns))) continue;
          try {
            rules.push(...(await view.roleRules(b.roleRef, ns)));
          } catch (e) {
            errors.push((e as Error).message);
          }
        }
      };
      await collect((await view.list('clusterrolebindings')) as BindingLike[], false);
      if (namespace) {
        await collect((await view.list('rolebindings', namespace)) as BindingLike[], true);
      }
      return { ...splitRules(rules), incomplete: false,
        ...(errors.length > 0 ? { evaluationError: aggregate(errors) } : {}) };
    },
  };
}

const nonEmpty = <K extends string>(k: K, v: readonly string[] | undefined) =>
  (v && v.length > 0 ? { [k]: [...v] } : {}) as { [P in K]?: string[] };

/** PolicyRules as the review's resource and non-resource rules (a rule may give both). */
export function splitRules(rules: readonly PolicyRule[]):
  Pick<UserRules, 'resourceRules' | 'nonResourceRules'> {
  const resourceRules: Array<UserRules['resourceRules'][number]> = [];
  const nonResourceRules: Array<UserRules['nonResourceRules'][number]> = [];
  for (const r of rules) {
    if ((r.resources ?? []).length > 0) {
      resourceRules.push({ verbs: [...r.verbs], ...nonEmpty('apiGroups', r.apiGroups),
        ...nonEmpty('resources', r.resources), ...nonEmpty('resourceNames', r.resourceNames) });
    }
    if ((r.nonResourceURLs ?? []).length > 0) {
      nonResourceRules.push({ verbs: [...r.verbs],
        ...nonEmpty('nonResourceURLs', r.nonResourceURLs) });
    }
  }
  return { resourceRules, nonResourceRules };
}
