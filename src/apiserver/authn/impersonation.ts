// User impersonation, as upstream's WithImpersonation filter (k8s.io/apiserver
// pkg/endpoints/filters/impersonation.go): after authentication, `Impersonate-User`,
// `Impersonate-Group`, `Impersonate-Extra-<key>` and `Impersonate-Uid` replace the request's
// user, each value first authorized for the requester with the `impersonate` verb on users,
// serviceaccounts, groups (API group ""), userextras/<key> or uids (authentication.k8s.io).
// A refusal is upstream's 403 (`users "x" is forbidden: User "y" cannot impersonate resource
// "users" in API group "" at the cluster scope`); groups, extra or a UID without a user is
// upstream's 500 ("requested [...] without impersonating a user").

import { kdpError } from '../../errors.js';
import { forbiddenError } from '../authz/index.js';
import type { AuthzAttributes, Authorizer, UserInfo } from '../pipeline-types.js';

export const IMPERSONATE_USER = 'impersonate-user';
export const IMPERSONATE_GROUP = 'impersonate-group';
export const IMPERSONATE_UID = 'impersonate-uid';
export const IMPERSONATE_EXTRA_PREFIX = 'impersonate-extra-';

const ALL_AUTHENTICATED = 'system:authenticated';
const ALL_UNAUTHENTICATED = 'system:unauthenticated';
const ANONYMOUS = 'system:anonymous';
const SA_PREFIX = 'system:serviceaccount:';
const AUTHN_GROUP = 'authentication.k8s.io';

/** Request headers, each name lower-case with every value it was sent with (Node's
 *  `headersDistinct`), so repeated `Impersonate-Group` headers stay apart. */
export type DistinctHeaders = Readonly<Record<string, readonly string[] | undefined>>;

/** One thing to impersonate (upstream builds a v1.ObjectReference per value). */
interface ImpersonationRequest {
  readonly kind: 'ServiceAccount' | 'User' | 'Group' | 'UserExtra' | 'UID';
  readonly name: string;
  readonly namespace?: string;
  /** UserExtra: the extra key (upstream's FieldPath). */
  readonly key?: string;
}

/** serviceaccount.SplitUsername: `system:serviceaccount:<ns>:<name>`, both parts non-empty
 *  and without further colons. */
function splitServiceAccount(user: string): { namespace: string; name: string } | undefined {
  if (!user.startsWith(SA_PREFIX)) return undefined;
  const parts = user.slice(SA_PREFIX.length).split(':');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') return undefined;
  return { namespace: parts[0]!, name: parts[1]! };
}

/** url.PathUnescape, keeping the raw key when it is malformed (upstream unescapeExtraKey). */
function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** Go's %v of a []v1.ObjectReference, for the "without impersonating a user" message. */
function formatRequests(reqs: readonly ImpersonationRequest[]): string {
  const ref = (r: ImpersonationRequest) => {
    const apiVersion = r.kind === 'UserExtra' || r.kind === 'UID' ? `${AUTHN_GROUP}/v1` : '';
    // Kind Namespace Name UID APIVersion ResourceVersion FieldPath
    return `{${[r.kind, r.namespace ?? '', r.name, '', apiVersion, '', r.key ?? ''].join(' ')}}`;
  };
  return `[${reqs.map(ref).join(' ')}]`;
}

function first(h: DistinctHeaders, name: string): string {
  return h[name]?.[0] ?? '';
}

/** buildImpersonationRequests: what the headers ask for, in upstream's order. */
function impersonationRequests(h: DistinctHeaders, requestUri: string): ImpersonationRequest[] {
  const out: ImpersonationRequest[] = [];
  const user = first(h, IMPERSONATE_USER);
  if (user !== '') {
    const sa = splitServiceAccount(user);
    out.push(sa ? { kind: 'ServiceAccount', ...sa } : { kind: 'User', name: user });
  }
  const groups = h[IMPERSONATE_GROUP] ?? [];
  for (const g of groups) out.push({ kind: 'Group', name: g });
  let hasExtra = false;
  for (const [name, values] of Object.entries(h)) {
    if (!name.startsWith(IMPERSONATE_EXTRA_PREFIX) || !values) continue;
    hasExtra = true;
    const key = unescapeExtraKey(name.slice(IMPERSONATE_EXTRA_PREFIX.length).toLowerCase());
    for (const v of values) out.push({ kind: 'UserExtra', name: v, key });
  }
  const uid = first(h, IMPERSONATE_UID);
  if (uid !== '') out.push({ kind: 'UID', name: uid });
  if ((groups.length > 0 || hasExtra || uid !== '') && user === '') {
    throw kdpError('KDP_INTERNAL', `Internal Server Error: ${JSON.stringify(requestUri)}: ` +
      `requested ${formatRequests(out)} without impersonating a user`);
  }
  return out;
}

/** The authorization check for one request (upstream's actingAsAttributes). */
function actingAs(requester: UserInfo, r: ImpersonationRequest): AuthzAttributes {
  const base = { user: requester, verb: 'impersonate', resourceRequest: true, name: r.name };
  switch (r.kind) {
    case 'ServiceAccount':
      return { ...base, apiGroup: '', resource: 'serviceaccounts', namespace: r.namespace };
    case 'User':
      return { ...base, apiGroup: '', resource: 'users' };
    case 'Group':
      return { ...base, apiGroup: '', resource: 'groups' };
    case 'UserExtra':
      return { ...base, apiGroup: AUTHN_GROUP, resource: 'userextras', subresource: r.key };
    case 'UID':
      return { ...base, apiGroup: AUTHN_GROUP, resource: 'uids' };
  }
}

/** A request's headers as DistinctHeaders: Node's `headersDistinct`, or built from `headers`
 *  where the request has none (light-my-request's injected requests). */
export function distinctHeaders(raw: {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly headersDistinct?: DistinctHeaders;
}): DistinctHeaders {
  if (raw.headersDistinct) return raw.headersDistinct;
  const out: Record<string, readonly string[]> = {};
  for (const [k, v] of Object.entries(raw.headers)) {
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v : [v];
  }
  return out;
}

/** Whether any impersonation header is present (cheap check for the common case). */
export function hasImpersonationHeaders(h: Readonly<Record<string, unknown>>): boolean {
  for (const name of Object.keys(h)) {
    if (name.startsWith('impersonate-')) return true;
  }
  return false;
}

/**
 * The user the request acts as: `requester` when it asks for no impersonation, else the
 * impersonated user once every value is authorized. Throws KDP_FORBIDDEN (403) for a value
 * the requester may not impersonate, KDP_INTERNAL (500) for groups/extra/UID without a user.
 */
export async function impersonatedUser(
  requester: UserInfo, headers: DistinctHeaders, authorizer: Authorizer, requestUri: string,
): Promise<UserInfo> {
  if (!hasImpersonationHeaders(headers)) return requester;
  const reqs = impersonationRequests(headers, requestUri);
  if (reqs.length === 0) return requester;
  // Specified groups are the authority, system:authenticated/unauthenticated included.
  const groupsSpecified = (headers[IMPERSONATE_GROUP] ?? []).length > 0;
  let name = '';
  let uid = '';
  let groups: string[] = [];
  const extra = new Map<string, string[]>();
  for (const r of reqs) {
    switch (r.kind) {
      case 'ServiceAccount':
        name = `${SA_PREFIX}${r.namespace}:${r.name}`;
        if (!groupsSpecified) {
          groups = ['system:serviceaccounts', `system:serviceaccounts:${r.namespace}`];
        }
        break;
      case 'User': name = r.name; break;
      case 'Group': groups.push(r.name); break;
      case 'UserExtra': {
        const values = extra.get(r.key!) ?? [];
        values.push(r.name);
        extra.set(r.key!, values);
        break;
      }
      case 'UID': uid = r.name; break;
    }
    const attrs = actingAs(requester, r);
    const d = await authorizer.authorize(attrs);
    if (!d.allowed) throw forbiddenError(attrs, d);
  }
  if (name !== ANONYMOUS) {
    if (!groups.some((g) => g === ALL_AUTHENTICATED || g === ALL_UNAUTHENTICATED)) {
      groups.push(ALL_AUTHENTICATED);
    }
  } else if (!groups.includes(ALL_UNAUTHENTICATED)) {
    groups.push(ALL_UNAUTHENTICATED);
  }
  return {
    name, groups, ...(uid !== '' ? { uid } : {}),
    ...(extra.size > 0 ? { extra: Object.fromEntries(extra) } : {}),
  };
}
