// Contracts of the request pipeline: authentication → authorization → admission → storage.
// Each stage is an interface so the API server is built from parts (and tests can swap them).

import type { FieldRequirement } from '../api/field-selectors.js';
import type { KubeObject } from '../client/types.js';

/** Who is making the request (k8s.io/apiserver user.Info). */
export interface UserInfo {
  readonly name: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  /** user.Info's Extra (set by impersonation's Impersonate-Extra-<key> headers). */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** What the authenticator sees of a request. */
export interface AuthnRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** DER of the verified client certificate, when the TLS peer presented one the CA signed. */
  readonly peerCertificate?: { readonly subjectCN: string; readonly subjectO: readonly string[] };
}

export interface Authenticator {
  /** A user, or null when the request carries no credentials (anonymous decides next).
   *  Throws (or rejects with) KDP_UNAUTHORIZED for credentials that are present but wrong.
   *  A Promise only when the answer needs a read (service-account tokens check their objects);
   *  callers must accept both. */
  authenticate(req: AuthnRequest): UserInfo | null | Promise<UserInfo | null>;
}

/** k8s.io/apiserver authorizer.Attributes (resource and non-resource requests). */
export interface AuthzAttributes {
  readonly user: UserInfo;
  /** get list watch create update patch delete deletecollection (or HTTP verb lowercased for
   *  non-resource requests). */
  readonly verb: string;
  readonly resourceRequest: boolean;
  readonly apiGroup?: string;
  readonly resource?: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** For non-resource requests, e.g. `/healthz`. */
  readonly path?: string;
  /** list/watch: the request's field selector as parsed requirements (upstream
   *  Attributes.GetFieldSelector), for authorizers that allow only scoped reads. */
  readonly fieldSelector?: readonly FieldRequirement[];
}

export interface AuthzDecision {
  readonly allowed: boolean;
  /** Why, for the 403 message. */
  readonly reason: string;
}

export interface Authorizer {
  authorize(attrs: AuthzAttributes): Promise<AuthzDecision>;
  /** What `user` may do in `namespace` (upstream authorizer.RuleResolver, for
   *  SelfSubjectRulesReview); absent: the authorizer cannot enumerate its rules. */
  rulesFor?(user: UserInfo, namespace: string): Promise<UserRules>;
}

/** authorizer.ResourceRuleInfo / NonResourceRuleInfo lists, as SubjectRulesReviewStatus. */
export interface UserRules {
  readonly resourceRules: ReadonlyArray<{ readonly verbs: readonly string[];
    readonly apiGroups?: readonly string[]; readonly resources?: readonly string[];
    readonly resourceNames?: readonly string[] }>;
  readonly nonResourceRules: ReadonlyArray<{ readonly verbs: readonly string[];
    readonly nonResourceURLs?: readonly string[] }>;
  /** The list may be missing rules (an authorizer that cannot enumerate them). */
  readonly incomplete: boolean;
  /** Why some rules could not be resolved (a binding to a missing role), if any. */
  readonly evaluationError?: string;
}

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  readonly operation: AdmissionOperation;
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** The incoming object (after defaulting); mutating plugins change it in place. */
  readonly object?: KubeObject;
  readonly oldObject?: KubeObject;
  readonly user: UserInfo;
  readonly dryRun: boolean;
}

/**
 * An admission plugin. `admit` may mutate `req.object`; `validate` may only reject.
 * Both throw KdpError (KDP_FORBIDDEN, KDP_INVALID, ...) to reject.
 * `committed`/`aborted` let allocators (ClusterIP, NodePort) release what a failed write took.
 */
export interface AdmissionPlugin {
  readonly name: string;
  admit?(req: AdmissionRequest): Promise<void>;
  validate?(req: AdmissionRequest): Promise<void>;
  /** The write this request made was stored (or, for DELETE, the object is gone). */
  committed?(req: AdmissionRequest): Promise<void>;
  /** The write failed after admit ran; undo any reservation. */
  aborted?(req: AdmissionRequest): Promise<void>;
}
