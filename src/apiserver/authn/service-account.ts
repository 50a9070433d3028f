// Service-account tokens: the issuer the TokenRequest endpoint signs with, and the token
// authenticator, as kube-apiserver's JWTTokenAuthenticator + the bound-token validator:
// a JWT whose (unverified) `iss` is one of ours is checked for its signature (keys picked by
// `kid`), issuer, audiences (must intersect the API server's), time (one minute of leeway),
// and then against the live objects: the ServiceAccount must exist with the claimed uid, a
// bound Pod/Secret/Node too. A token that is not ours is left to the other authenticators.

import { createPublicKey, randomUUID } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import type { KubeObject } from '../../client/types.js';
import { kdpError } from '../../errors.js';
import type { UserInfo } from '../pipeline-types.js';
import {
  audiencesOf, LEEWAY_SECONDS, privateClaimsOf, serviceAccountUser, timeProblem, tokenClaims,
  type ServiceAccountInfo, type TokenClaimsInput,
} from './sa-claims.js';
import { parseJwt, signJwt, verifyRs256, type JsonValue } from './sa-jwt.js';
import { keyIdOf } from '../pki/service-account-key.js';

/** kube-apiserver's default `--service-account-issuer` in kubeadm clusters. */
export const DEFAULT_SA_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** Signs bound tokens (the API server's `--service-account-signing-key-file`). */
export interface ServiceAccountTokenIssuer {
  /** `iss` of every token issued. */
  readonly issuer: string;
  /** The API server's audiences (`--api-audiences`, default the issuer): a TokenRequest
   *  without audiences gets these. */
  readonly audiences: readonly string[];
  /** A fresh `jti`. */
  newJti(): string;
  /** The signed token and its payload. `input.issuer` is ignored: it is always ours. */
  issue(input: Omit<TokenClaimsInput, 'issuer'>):
    { token: string; claims: Record<string, JsonValue> };
}

export function buildServiceAccountTokenIssuer(o: {
  privateKey: KeyObject; issuer?: string; audiences?: readonly string[]; newJti?: () => string;
}): ServiceAccountTokenIssuer {
  const issuer = o.issuer ?? DEFAULT_SA_ISSUER;
  const kid = keyIdOf(createPublicKey(o.privateKey));
  return {
    issuer, audiences: o.audiences && o.audiences.length > 0 ? [...o.audiences] : [issuer],
    newJti: o.newJti ?? randomUUID,
    issue(input) {
      const claims = tokenClaims({ ...input, issuer });
      return { token: signJwt(claims, o.privateKey, kid), claims };
    },
  };
}

/** Reads the objects a token refers to (the API server passes its storage). */
export interface ServiceAccountObjects {
  /** The object, or undefined when it does not exist. `namespace` is undefined for nodes. */
  get(resource: 'serviceaccounts' | 'pods' | 'secrets' | 'nodes', namespace: string | undefined,
    name: string): Promise<KubeObject | undefined>;
}

export interface ServiceAccountAuthenticatorOptions {
  /** Accepted `iss` values (the first is the one tokens are issued with). */
  readonly issuers: readonly string[];
  /** The API server's audiences; a token's must intersect them. */
  readonly audiences: readonly string[];
  /** Verification keys (`--service-account-key-file`), any of which may have signed. */
  readonly publicKeys: readonly KeyObject[];
  readonly objects: ServiceAccountObjects;
  /** Milliseconds since the epoch (default Date.now). */
  readonly now?: () => number;
}

/** Authenticates one bearer token: undefined when the token is not ours (not a JWT with one of
 *  our issuers), else the user, or a rejection with KDP_UNAUTHORIZED (the reason as `cause`). */
export type ServiceAccountTokenAuthenticator = (token: string) => Promise<UserInfo> | undefined;

function refused(reason: string): Error {
  return kdpError('KDP_UNAUTHORIZED', 'Unauthorized', {}, new Error(reason));
}

/** Go's %q of a []string: `["a" "b"]`. */
function goQuoteList(list: readonly string[]): string {
  return `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;
}

function deletedBefore(obj: KubeObject, limitMs: number): boolean {
  const ts = obj.metadata.deletionTimestamp;
  return typeof ts === 'string' && Date.parse(ts) < limitMs;
}

export function buildServiceAccountTokenAuthenticator(
  o: ServiceAccountAuthenticatorOptions,
): ServiceAccountTokenAuthenticator {
  const now = o.now ?? Date.now;
  const issuers = new Set(o.issuers);
  const keys = o.publicKeys.map((k) => ({ key: k, kid: keyIdOf(k) }));
  const apiAudiences = [...o.audiences];

  async function validate(payload: Record<string, JsonValue>): Promise<UserInfo> {
    const nowMs = now();
    const problem = timeProblem(payload, Math.floor(nowMs / 1000));
    if (problem) throw refused(problem);
    const limit = nowMs - LEEWAY_SECONDS * 1000;
    const pc = privateClaimsOf(payload);
    const ns = pc.namespace;
    const saName = pc.serviceAccount.name ?? '';
    const sa = await o.objects.get('serviceaccounts', ns, saName);
    if (!sa) throw refused(`serviceaccounts "${saName}" not found`);
    if ((sa.metadata.uid ?? '') !== (pc.serviceAccount.uid ?? '')) {
      throw refused(`service account UID (${sa.metadata.uid}) does not match claim ` +
        `(${pc.serviceAccount.uid ?? ''})`);
    }
    if (deletedBefore(sa, limit)) throw refused(`service account ${ns}/${saName} has been deleted`);
    if (pc.secret) {
      const s = await o.objects.get('secrets', ns, pc.secret.name);
      if (!s) throw refused('service account token has been invalidated');
      if ((s.metadata.uid ?? '') !== (pc.secret.uid ?? '')) {
        throw refused(`secret UID (${s.metadata.uid}) does not match service account secret ` +
          `ref claim (${pc.secret.uid ?? ''})`);
      }
      if (deletedBefore(s, limit)) throw refused('service account token has been invalidated');
    }
    let info: ServiceAccountInfo = { namespace: ns, name: saName,
      uid: pc.serviceAccount.uid ?? '' };
    if (pc.pod) {
      const p = await o.objects.get('pods', ns, pc.pod.name);
      if (!p) throw refused('service account token has been invalidated');
      if ((p.metadata.uid ?? '') !== (pc.pod.uid ?? '')) {
        throw refused(`pod UID (${p.metadata.uid}) does not match service account pod ref ` +
          `claim (${pc.pod.uid ?? ''})`);
      }
      if (deletedBefore(p, limit)) throw refused('service account token has been invalidated');
      info = { ...info, podName: pc.pod.name, podUid: pc.pod.uid };
      // A pod-bound token's node is informational: not checked, as upstream.
      if (pc.node) info = { ...info, nodeName: pc.node.name, nodeUid: pc.node.uid };
    } else if (pc.node) {
      const n = await o.objects.get('nodes', undefined, pc.node.name);
      if (!n) throw refused('service account token has been invalidated');
      if ((n.metadata.uid ?? '') !== (pc.node.uid ?? '')) {
        throw refused(`node UID (${n.metadata.uid}) does not match service account node ref ` +
          `claim (${pc.node.uid ?? ''})`);
      }
      if (deletedBefore(n, limit)) throw refused('service account token has been invalidated');
      info = { ...info, nodeName: pc.node.name, nodeUid: pc.node.uid };
    }
    const jti = typeof payload.jti === 'string' ? payload.jti : '';
    return serviceAccountUser({ ...info, ...(jti ? { credentialId: `JTI=${jti}` } : {}) });
  }

  return (token: string) => {
    const jwt = parseJwt(token);
    if (!jwt || typeof jwt.payload.iss !== 'string' || !issuers.has(jwt.payload.iss)) {
      return undefined;
    }
    const kid = typeof jwt.header.kid === 'string' ? jwt.header.kid : '';
    const candidates = kid ? keys.filter((k) => k.kid === kid) : keys;
    if (candidates.length === 0) {
      return Promise.reject(refused('invalid signature, no keys found'));
    }
    if (!candidates.some((k) => verifyRs256(jwt, k.key))) {
      return Promise.reject(refused('square/go-jose: error in cryptographic primitive'));
    }
    const tokenAudiences = audiencesOf(jwt.payload);
    const effective = tokenAudiences.length === 0 ? apiAudiences : tokenAudiences;
    if (apiAudiences.length > 0 && !effective.some((a) => apiAudiences.includes(a))) {
      return Promise.reject(refused(`token audiences ${goQuoteList(effective)} is invalid for ` +
        `the target audiences ${goQuoteList(apiAudiences)}`));
    }
    return validate(jwt.payload);
  };
}
