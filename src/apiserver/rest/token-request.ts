// serviceaccounts/token (authentication.k8s.io/v1 TokenRequest), as upstream's TokenREST
// (pkg/registry/core/serviceaccount/storage/token.go, v1.33): the body's name/namespace must
// match the URL; expirationSeconds defaults to 3600 and must lie in [600, 2^32]; audiences
// default to the API server's; a boundObjectRef names a Pod (running as this ServiceAccount;
// its node goes into the token too), a Secret or a Node that must exist (with the uid, when
// given). Nothing is stored: the answer is the request with `status.token` and
// `status.expirationTimestamp` filled in.

import type { KubeObject } from '../../client/types.js';
import type { Cause } from '../../errors.js';
import { isKdpError, kdpError } from '../../errors.js';
import type { NameUid } from '../authn/sa-claims.js';
import { nodeIdentity } from '../authz/node.js';
import type { ServedResource } from '../resource-types.js';
import type { RequestContext, ServiceDeps } from './deps.js';
import { badRequest, pathNotFound } from './errors.js';
import { timestamp } from './prepare.js';
import { readObject } from './read.js';

export const TOKEN_REQUEST_API_VERSION = 'authentication.k8s.io/v1';
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;
/** The kubelet's projected-token request that upstream extends (WarnOnlyBoundTokenExpiration). */
export const WARN_ONLY_EXPIRATION_SECONDS = 3607;
/** ExpirationExtensionSeconds: one year. */
const EXTENDED_EXPIRATION_SECONDS = 24 * 365 * 3600;

interface BoundRef { kind?: string; apiVersion?: string; name?: string; uid?: string }
interface TokenRequestBody {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; [k: string]: unknown };
  spec?: { audiences?: unknown; expirationSeconds?: unknown; boundObjectRef?: unknown };
}

function invalidTokenRequest(name: string, causes: Cause[]) {
  const text = causes.map((c) => `${c.field}: ${c.message}`);
  return kdpError('KDP_INVALID', `TokenRequest.authentication.k8s.io "${name}" is invalid: ` +
    (text.length > 1 ? `[${text.join(', ')}]` : text[0]!),
  { name, group: 'authentication.k8s.io', kind: 'TokenRequest', causes });
}

function invalidValue(field: string, value: unknown, detail: string): Cause {
  return { field, reason: 'FieldValueInvalid',
    message: `Invalid value: ${JSON.stringify(value)}: ${detail}` };
}

/** Type checks as Go's decoder would (400 naming the field). */
function decodeBody(body: unknown): TokenRequestBody {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('the body of the request must be a JSON or YAML object');
  }
  const b = body as TokenRequestBody;
  if (b.kind !== undefined && b.kind !== '' && b.kind !== 'TokenRequest') {
    throw badRequest(`the API version in the data (${b.apiVersion ?? ''}) does not match the ` +
      `expected API version (${TOKEN_REQUEST_API_VERSION}) or kind ${b.kind} is not TokenRequest`);
  }
  const wrong = (field: string, type: string) => badRequest(`TokenRequest in version "v1" ` +
    `cannot be handled as a TokenRequest: json: cannot unmarshal into Go struct field ` +
    `TokenRequest.${field} of type ${type}`);
  const s = b.spec ?? {};
  if (typeof s !== 'object' || Array.isArray(s)) throw wrong('spec', 'v1.TokenRequestSpec');
  if (s.audiences !== undefined && s.audiences !== null && (!Array.isArray(s.audiences) ||
    s.audiences.some((a) => typeof a !== 'string'))) throw wrong('spec.audiences', '[]string');
  if (s.expirationSeconds !== undefined && s.expirationSeconds !== null &&
    !Number.isSafeInteger(s.expirationSeconds)) throw wrong('spec.expirationSeconds', 'int64');
  const ref = s.boundObjectRef;
  if (ref !== undefined && ref !== null) {
    if (typeof ref !== 'object' || Array.isArray(ref)) {
      throw wrong('spec.boundObjectRef', 'v1.BoundObjectReference');
    }
    for (const k of ['kind', 'apiVersion', 'name', 'uid'] as const) {
      const v = (ref as BoundRef)[k];
      if (v !== undefined && v !== null && typeof v !== 'string') {
        throw wrong(`spec.boundObjectRef.${k}`, 'string');
      }
    }
  }
  return b;
}

/** `group/version, Kind=kind` as Go's GroupVersionKind.String(). */
function gvkString(ref: BoundRef): { group: string; text: string } {
  const av = ref.apiVersion ?? '';
  const i = av.indexOf('/');
  const group = i < 0 ? '' : av.slice(0, i);
  const version = i < 0 ? av : av.slice(i + 1);
  return { group, text: `${group}/${version}, Kind=${ref.kind ?? ''}` };
}

function served(deps: ServiceDeps, resource: string): ServedResource {
  const r = deps.catalog.find('', 'v1', resource);
  if (!r) throw kdpError('KDP_INTERNAL', `the ${resource} resource is not served`);
  return r;
}

interface Bound { pod?: NameUid; secret?: NameUid; node?: NameUid; uid: string }

async function resolveBound(deps: ServiceDeps, ns: string, saName: string, ref: BoundRef):
  Promise<Bound> {
  const gvk = gvkString(ref);
  const name = ref.name ?? '';
  if (gvk.group === '' && ref.kind === 'Pod') {
    const { obj: pod } = await readObject(deps, served(deps, 'pods'), ns, name);
    const spec = (pod.spec ?? {}) as { serviceAccountName?: string; nodeName?: string };
    if ((spec.serviceAccountName ?? '') !== saName) {
      throw badRequest(`cannot bind token for serviceaccount "${saName}" to pod running with ` +
        'different serviceaccount name.');
    }
    const out: Bound = { pod: { name, uid: pod.metadata.uid ?? '' }, uid: pod.metadata.uid ?? '' };
    if (spec.nodeName) {
      // As upstream: a missing Node still names the pod's node, without a uid.
      try {
        const { obj: node } = await readObject(deps, served(deps, 'nodes'), undefined,
          spec.nodeName);
        return { ...out, node: { name: spec.nodeName, uid: node.metadata.uid ?? '' } };
      } catch (e) {
        if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e;
        return { ...out, node: { name: spec.nodeName } };
      }
    }
    return out;
  }
  if (gvk.group === '' && ref.kind === 'Node') {
    const { obj } = await readObject(deps, served(deps, 'nodes'), undefined, name);
    return { node: { name, uid: obj.metadata.uid ?? '' }, uid: obj.metadata.uid ?? '' };
  }
  if (gvk.group === '' && ref.kind === 'Secret') {
    const { obj } = await readObject(deps, served(deps, 'secrets'), ns, name);
    return { secret: { name, uid: obj.metadata.uid ?? '' }, uid: obj.metadata.uid ?? '' };
  }
  throw badRequest(`cannot bind token to object of type ${gvk.text}`);
}

/**
 * NodeRestriction's rule for tokens a node asks for (upstream admitServiceAccount): bound to a
 * pod, by uid, that is scheduled on that node. A node can thus never mint a node-bound token.
 */
async function checkNodeRequest(deps: ServiceDeps, node: string, ns: string, saName: string,
  ref: BoundRef | undefined): Promise<void> {
  const forbidden = (why: string) => kdpError('KDP_FORBIDDEN',
    `serviceaccounts "${saName}" is forbidden: ${why}`, { name: saName, kind: 'serviceaccounts' });
  if (!ref || ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) {
    throw forbidden('node requested token not bound to a pod');
  }
  if (!ref.uid) throw forbidden('node requested token with a pod binding without a uid');
  const { obj: pod } = await readObject(deps, served(deps, 'pods'), ns, ref.name);
  if (pod.metadata.uid !== ref.uid) {
    throw forbidden(`the UID in the bound object reference (${ref.uid}) does not match the ` +
      'UID in record. The object might have been deleted and then recreated');
  }
  if ((pod.spec as { nodeName?: string } | undefined)?.nodeName !== node) {
    throw forbidden('node requested token bound to a pod scheduled on a different node');
  }
}

/** Issues a token for ServiceAccount `t.name` in `t.namespace` (POST .../token). */
export async function requestToken(
  deps: ServiceDeps, ctx: RequestContext, sas: ServedResource,
  t: { namespace?: string; name?: string }, body: unknown,
): Promise<KubeObject> {
  const issuer = deps.serviceAccountTokens;
  if (!issuer) throw pathNotFound();
  const ns = t.namespace;
  if (!ns) throw badRequest('namespace is required');
  const name = t.name ?? '';
  const req = decodeBody(body);
  const meta = { ...(req.metadata ?? {}) };
  if (meta.name && meta.name !== name) {
    throw invalidTokenRequest(name, [invalidValue('metadata.name', meta.name,
      'must match the service account name if specified')]);
  }
  if (meta.namespace && meta.namespace !== ns) {
    throw invalidTokenRequest(name, [invalidValue('metadata.namespace', meta.namespace,
      'must match the service account namespace if specified')]);
  }
  const { obj: sa } = await readObject(deps, sas, ns, name);
  const spec = req.spec ?? {};
  const given = (spec.audiences ?? []) as string[];
  const audiences = given.length > 0 ? [...given] : [...issuer.audiences];
  const expirationSeconds = (spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS) as number;
  const now = deps.now();
  const causes: Cause[] = [];
  if (expirationSeconds < MIN_EXPIRATION_SECONDS) {
    causes.push(invalidValue('spec.expirationSeconds', expirationSeconds,
      'may not specify a duration less than 10 minutes'));
  }
  if (expirationSeconds > MAX_EXPIRATION_SECONDS) {
    causes.push(invalidValue('spec.expirationSeconds', expirationSeconds,
      'may not specify a duration larger than 2^32 seconds'));
  }
  if (causes.length > 0) throw invalidTokenRequest('', causes);

  const ref = (spec.boundObjectRef ?? undefined) as BoundRef | undefined;
  const node = nodeIdentity(ctx.user);
  if (node !== undefined) await checkNodeRequest(deps, node, ns, name, ref);
  let bound: Bound | undefined;
  if (ref) {
    bound = await resolveBound(deps, ns, name, ref);
    if (ref.uid && ref.uid !== bound.uid) {
      throw kdpError('KDP_CONFLICT', `Operation cannot be fulfilled on ${ref.kind} ` +
        `"${ref.name ?? ''}": the UID in the bound object reference (${ref.uid}) does not match ` +
        'the UID in record. The object might have been deleted and then recreated',
      { name: ref.name ?? '', kind: ref.kind ?? '' });
    }
  }
  // As upstream's --service-account-extend-token-expiration (default on): the kubelet's
  // 3607-second pod tokens for the API server live a year and only warn after 3607 s.
  let exp = expirationSeconds;
  let warnAfter = 0;
  if (bound?.pod && exp === WARN_ONLY_EXPIRATION_SECONDS &&
    audiences.every((a) => issuer.audiences.includes(a))) {
    warnAfter = exp;
    exp = EXTENDED_EXPIRATION_SECONDS;
  }
  const nowSec = Math.floor(now.getTime() / 1000);
  const { token } = issuer.issue({
    namespace: ns, serviceAccount: { name, uid: sa.metadata.uid ?? '' }, audiences,
    now: nowSec, expirationSeconds: exp, warnAfterSeconds: warnAfter, jti: issuer.newJti(),
    pod: bound?.pod, secret: bound?.secret, node: bound?.node,
  });
  return {
    kind: 'TokenRequest', apiVersion: TOKEN_REQUEST_API_VERSION,
    metadata: { ...meta, name, namespace: ns, creationTimestamp: timestamp(now) },
    spec: { audiences, expirationSeconds, boundObjectRef: ref ?? null },
    status: { token,
      expirationTimestamp: timestamp(new Date((nowSec + expirationSeconds) * 1000)) },
  } as KubeObject;
}
