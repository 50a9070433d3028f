// SelfSubjectAccessReview / SubjectAccessReview evaluation (authorization.k8s.io/v1), as
// upstream's registry/authorization/{self,}subjectaccessreview REST: validate the spec, ask the
// authorizer, answer `status`.

import { kdpError } from '../../errors.js';
import type { AuthzAttributes, Authorizer, UserInfo } from '../pipeline-types.js';

export interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

export interface NonResourceAttributes {
  path?: string;
  verb?: string;
}

export interface AccessReviewSpec {
  resourceAttributes?: ResourceAttributes;
  nonResourceAttributes?: NonResourceAttributes;
  /** SubjectAccessReview only. */
  user?: string;
  groups?: string[];
  uid?: string;
}

export interface AccessReviewStatus {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

function validate(kind: string, spec: AccessReviewSpec): void {
  const both = spec.resourceAttributes && spec.nonResourceAttributes;
  const neither = !spec.resourceAttributes && !spec.nonResourceAttributes;
  if (!both && !neither) return;
  const field = both ? 'spec.nonResourceAttributes' : 'spec.resourceAttributes';
  const detail = both ? 'cannot be specified in combination with resourceAttributes'
    : 'exactly one of nonResourceAttributes or resourceAttributes must be specified';
  const value = both ? JSON.stringify(spec.nonResourceAttributes) : 'null';
  const message = `Invalid value: ${JSON.stringify(value)}: ${detail}`;
  throw kdpError('KDP_INVALID',
    `${kind}.authorization.k8s.io "" is invalid: ${field}: ${message}`,
    { kind, group: 'authorization.k8s.io', causes: [{ field, reason: 'FieldValueInvalid',
      message }] });
}

/** The authorizer attributes a review spec asks about. */
export function attributesFromSpec(user: UserInfo, spec: AccessReviewSpec): AuthzAttributes {
  const r = spec.resourceAttributes;
  if (r) {
    return {
      user, verb: r.verb ?? '', resourceRequest: true, apiGroup: r.group ?? '',
      resource: r.resource ?? '', subresource: r.subresource ?? '',
      namespace: r.namespace ?? '', name: r.name ?? '',
    };
  }
  const n = spec.nonResourceAttributes ?? {};
  return { user, verb: n.verb ?? '', resourceRequest: false, path: n.path ?? '' };
}

/** The user a SubjectAccessReview names (its spec.user/groups/uid). */
export function userFromSpec(spec: AccessReviewSpec): UserInfo {
  return { name: spec.user ?? '', groups: spec.groups ?? [],
    ...(spec.uid ? { uid: spec.uid } : {}) };
}

/**
 * Evaluates a review for `user` (the requester for SelfSubjectAccessReview, `userFromSpec` for
 * SubjectAccessReview). Throws KDP_INVALID for a spec with neither or both attribute kinds.
 * Authorizer failures become `evaluationError`, as upstream.
 */
export async function evaluateAccessReview(
  authorizer: Authorizer, user: UserInfo, spec: AccessReviewSpec,
  kind = 'SelfSubjectAccessReview',
): Promise<AccessReviewStatus> {
  validate(kind, spec);
  try {
    const d = await authorizer.authorize(attributesFromSpec(user, spec));
    return { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) };
  } catch (e) {
    return { allowed: false, evaluationError: (e as Error).message };
  }
}
