// The bootstrap token authenticator, as upstream's plugin/pkg/auth/authenticator/token/bootstrap:
// a bearer token of the form `<id>.<secret>` is checked against the Secret
// `kube-system/bootstrap-token-<id>` (type bootstrap.kubernetes.io/token, not being deleted,
// same secret compared in constant time, not expired, `usage-bootstrap-authentication: true`)
// and authenticates as `system:bootstrap:<id>` in `system:bootstrappers` plus the token's
// `auth-extra-groups`. A token of that form that fails any check is a 401; other tokens are not
// this authenticator's (undefined), so the next one (service-account JWTs) gets them.

import { timingSafeEqual } from 'node:crypto';
import type { KubeObject } from '../../client/types.js';
import { kdpError } from '../../errors.js';
import type { UserInfo } from '../pipeline-types.js';
import {
  BOOTSTRAP_DEFAULT_GROUP, BOOTSTRAP_TOKEN_NAMESPACE, BOOTSTRAP_USER_PREFIX, extraGroupsOf,
  hasExpired, parseToken, secretName, tokenOfSecret, usageEnabled,
} from '../../bootstrap/token.js';

export type BootstrapTokenAuthenticator = (token: string) => Promise<UserInfo> | undefined;

export interface BootstrapTokenAuthenticatorOptions {
  /** The Secret, or undefined when it does not exist. */
  getSecret(namespace: string, name: string): Promise<KubeObject | undefined>;
  readonly now?: () => number;
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
};

export function buildBootstrapTokenAuthenticator(o: BootstrapTokenAuthenticatorOptions):
  BootstrapTokenAuthenticator {
  const now = o.now ?? Date.now;
  const refuse = () => kdpError('KDP_UNAUTHORIZED', 'Unauthorized');
  return (text) => {
    const t = parseToken(text);
    if (!t) return undefined;
    return (async () => {
      const secret = await o.getSecret(BOOTSTRAP_TOKEN_NAMESPACE, secretName(t.id));
      if (!secret || secret.metadata.deletionTimestamp) throw refuse();
      const parsed = tokenOfSecret(secret);
      if (!parsed || parsed.token.id !== t.id || !same(parsed.token.secret, t.secret)) throw refuse();
      if (hasExpired(parsed.data, now())) throw refuse();
      if (!usageEnabled(parsed.data, 'authentication')) throw refuse();
      const extra = extraGroupsOf(parsed.data);
      if (extra.problem) throw refuse();
      // upstream GetGroups: the default group and the extra ones, deduplicated and sorted.
      const groups = [...new Set([BOOTSTRAP_DEFAULT_GROUP, ...extra.groups])].sort();
      return { name: `${BOOTSTRAP_USER_PREFIX}${t.id}`, groups };
    })();
  };
}
