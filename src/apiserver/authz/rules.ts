// RBAC rule and subject matching, as k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac
// (RuleAllows, VerbMatches, APIGroupMatches, ResourceMatches, ResourceNameMatches,
// NonResourceURLMatches, appliesToUser).

import type { AuthzAttributes, UserInfo } from '../pipeline-types.js';

export interface PolicyRule {
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

export interface Subject {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly apiGroup?: string;
}

export interface RoleRef {
  readonly apiGroup?: string;
  readonly kind: string;
  readonly name: string;
}

const ALL = '*';

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === ALL || v === verb);
}

function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === ALL || g === group);
}

function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === ALL || r === combined) return true;
    // `*/status` matches any resource's status subresource.
    if (subresource !== '' && r.length === subresource.length + 2 && r.startsWith('*/') &&
      r.endsWith(subresource)) return true;
  }
  return false;
}

function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

function nonResourceUrlMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === ALL || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))) return true;
  }
  return false;
}

export function ruleAllows(attrs: AuthzAttributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, attrs.verb)) return false;
  if (!attrs.resourceRequest) return nonResourceUrlMatches(rule, attrs.path ?? '');
  const sub = attrs.subresource ?? '';
  const combined = sub === '' ? (attrs.resource ?? '') : `${attrs.resource ?? ''}/${sub}`;
  return apiGroupMatches(rule, attrs.apiGroup ?? '') &&
    resourceMatches(rule, combined, sub) &&
    resourceNameMatches(rule, attrs.name ?? '');
}

export const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** `bindingNamespace` is '' for ClusterRoleBindings. */
export function appliesToUser(user: UserInfo, s: Subject, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return user.name === s.name;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      return ns !== '' && user.name === `${SERVICE_ACCOUNT_PREFIX}${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

/** As upstream's describeSubject, for the "allowed by" reason. */
export function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') {
    return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  }
  return `${s.kind} ${JSON.stringify(s.name)}`;
}
