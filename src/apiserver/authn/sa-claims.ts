// The claims of a bound service-account token and their time checks, as upstream's
// pkg/serviceaccount/claims.go (v1.33: JTI, pod-node info and node binding on): public claims
// iss, sub `system:serviceaccount:NS:NAME`, aud, exp, iat, nbf, jti, and the private claim
// `kubernetes.io` {namespace, serviceaccount{name,uid}, pod|secret|node{name,uid}, warnafter}.
// Also the user a verified token stands for (k8s.io/apiserver serviceaccount.UserInfo).

import type { UserInfo } from '../pipeline-types.js';
import type { JsonValue } from './sa-jwt.js';

export const SA_USER_PREFIX = 'system:serviceaccount:';
export const ALL_SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';
/** go-jose's DefaultLeeway: exp, nbf and iat are checked with a minute of slack. */
export const LEEWAY_SECONDS = 60;

export const EXTRA_POD_NAME = 'authentication.kubernetes.io/pod-name';
export const EXTRA_POD_UID = 'authentication.kubernetes.io/pod-uid';
export const EXTRA_NODE_NAME = 'authentication.kubernetes.io/node-name';
export const EXTRA_NODE_UID = 'authentication.kubernetes.io/node-uid';
export const EXTRA_CREDENTIAL_ID = 'authentication.kubernetes.io/credential-id';

export interface NameUid { readonly name: string; readonly uid?: string }

export interface TokenClaimsInput {
  readonly issuer: string;
  readonly namespace: string;
  readonly serviceAccount: { readonly name: string; readonly uid: string };
  readonly audiences: readonly string[];
  /** Seconds since the epoch. */
  readonly now: number;
  readonly expirationSeconds: number;
  /** Projected-token transition: warn (not fail) after this many seconds; 0 for none. */
  readonly warnAfterSeconds?: number;
  readonly jti: string;
  /** At most one of pod/secret; `node` alone binds to a node, with `pod` it is the pod's node. */
  readonly pod?: NameUid;
  readonly secret?: NameUid;
  readonly node?: NameUid;
}

/** `system:serviceaccount:NS:NAME` (apiserver serviceaccount.MakeUsername). */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SA_USER_PREFIX}${namespace}:${name}`;
}

/** `NS`/`NAME` of a service-account user name, or undefined for any other user. */
export function splitServiceAccountUsername(user: string):
  { namespace: string; name: string } | undefined {
  if (!user.startsWith(SA_USER_PREFIX)) return undefined;
  const parts = user.slice(SA_USER_PREFIX.length).split(':');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') return undefined;
  return { namespace: parts[0]!, name: parts[1]! };
}

function ref(r: NameUid): Record<string, JsonValue> {
  return { ...(r.name ? { name: r.name } : {}), ...(r.uid ? { uid: r.uid } : {}) };
}

/** The JWT payload (before `iss` precedence: the issuer is always ours). */
export function tokenClaims(i: TokenClaimsInput): Record<string, JsonValue> {
  const k8s: Record<string, JsonValue> = {
    namespace: i.namespace, serviceaccount: ref(i.serviceAccount),
  };
  if (i.pod) {
    k8s.pod = ref(i.pod);
    if (i.node) k8s.node = ref(i.node);
  } else if (i.secret) {
    k8s.secret = ref(i.secret);
  } else if (i.node) {
    k8s.node = ref(i.node);
  }
  if (i.warnAfterSeconds) k8s.warnafter = i.now + i.warnAfterSeconds;
  return {
    aud: [...i.audiences], exp: i.now + i.expirationSeconds, iat: i.now, iss: i.issuer,
    jti: i.jti, 'kubernetes.io': k8s, nbf: i.now,
    sub: serviceAccountUsername(i.namespace, i.serviceAccount.name),
  };
}

/** The private claim as read from a verified token (every field checked for its type). */
export interface PrivateClaims {
  readonly namespace: string;
  readonly serviceAccount: NameUid;
  readonly pod?: NameUid;
  readonly secret?: NameUid;
  readonly node?: NameUid;
}

function str(v: JsonValue | undefined): string {
  return typeof v === 'string' ? v : '';
}

function refOf(v: JsonValue | undefined): NameUid | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  return { name: str(v.name), uid: str(v.uid) };
}

export function privateClaimsOf(payload: Record<string, JsonValue>): PrivateClaims {
  const k = payload['kubernetes.io'];
  const o = k !== null && typeof k === 'object' && !Array.isArray(k) ? k : {};
  return {
    namespace: str(o.namespace), serviceAccount: refOf(o.serviceaccount) ?? { name: '' },
    pod: refOf(o.pod), secret: refOf(o.secret), node: refOf(o.node),
  };
}

/** The token's audiences: a string or a list (RFC 7519 allows both). */
export function audiencesOf(payload: Record<string, JsonValue>): string[] {
  const a = payload.aud;
  if (typeof a === 'string') return [a];
  return Array.isArray(a) ? a.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * Upstream's jwt.Claims.Validate with its leeway: the reason a token is not valid at `now`
 * (seconds), or undefined. A numeric date that is present but not a number is invalid.
 */
export function timeProblem(payload: Record<string, JsonValue>, now: number): string | undefined {
  const num = (k: string) => payload[k];
  for (const k of ['exp', 'nbf', 'iat']) {
    const v = num(k);
    if (v !== undefined && typeof v !== 'number') {
      return 'service account token claims could not be validated due to unexpected validation ' +
        'error';
    }
  }
  const { exp, nbf, iat } = payload as { exp?: number; nbf?: number; iat?: number };
  if (nbf !== undefined && now + LEEWAY_SECONDS < nbf) {
    return 'service account token is not valid yet';
  }
  if (exp !== undefined && now - LEEWAY_SECONDS > exp) return 'service account token has expired';
  if (iat !== undefined && now + LEEWAY_SECONDS < iat) {
    return 'service account token is issued in the future';
  }
  return undefined;
}

/** What a verified token establishes (apiserver serviceaccount.ServiceAccountInfo). */
export interface ServiceAccountInfo {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly podName?: string;
  readonly podUid?: string;
  readonly nodeName?: string;
  readonly nodeUid?: string;
  /** `JTI=<jti>` (CredentialIDForJTI); empty when the token has no jti. */
  readonly credentialId?: string;
}

/** The user of a service-account token: name, uid, both groups and the extras upstream sets. */
export function serviceAccountUser(sa: ServiceAccountInfo): UserInfo {
  const extra: Record<string, string[]> = {};
  if (sa.podName && sa.podUid) {
    extra[EXTRA_POD_NAME] = [sa.podName];
    extra[EXTRA_POD_UID] = [sa.podUid];
  }
  if (sa.credentialId) extra[EXTRA_CREDENTIAL_ID] = [sa.credentialId];
  if (sa.nodeName) {
    extra[EXTRA_NODE_NAME] = [sa.nodeName];
    if (sa.nodeUid) extra[EXTRA_NODE_UID] = [sa.nodeUid];
  }
  return {
    name: serviceAccountUsername(sa.namespace, sa.name), uid: sa.uid,
    groups: [ALL_SERVICE_ACCOUNTS_GROUP, `${ALL_SERVICE_ACCOUNTS_GROUP}:${sa.namespace}`],
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
}
