// Wiring of service-account tokens into a running API server, as kube-apiserver's
// --service-account-signing-key-file / --service-account-key-file / --service-account-issuer /
// --api-audiences: the key pair from the PKI directory (kubeadm's sa.key, sa.pub), the issuer
// that serviceaccounts/token signs with, and the authenticator that reads the objects a token
// names from the server's own storage.

import type { KubeObject } from '../client/types.js';
import { isKdpError, kdpError } from '../errors.js';
import {
  buildServiceAccountTokenAuthenticator, buildServiceAccountTokenIssuer, DEFAULT_SA_ISSUER,
  type ServiceAccountTokenAuthenticator, type ServiceAccountTokenIssuer,
} from './authn/service-account.js';
import { ensureServiceAccountKey } from './pki/service-account-key.js';
import type { ServiceDeps } from './rest/deps.js';
import { readObject } from './rest/read.js';

export interface ServiceAccountTokens {
  readonly issuer: ServiceAccountTokenIssuer;
  readonly authenticate: ServiceAccountTokenAuthenticator;
}

export interface ServiceAccountTokenOptions {
  /** `iss` (default https://kubernetes.default.svc.cluster.local, kubeadm's). */
  readonly issuer?: string;
  /** The API server's audiences (default: the issuer). */
  readonly audiences?: readonly string[];
}

/**
 * Loads (or creates) `<pkiDir>/sa.key` and `sa.pub` and builds both halves. `getDeps` is the
 * server's storage once it exists; a token checked before that is refused as unavailable.
 */
export async function buildServiceAccountTokens(
  pkiDir: string, getDeps: () => ServiceDeps | undefined, o: ServiceAccountTokenOptions = {},
): Promise<ServiceAccountTokens> {
  const key = await ensureServiceAccountKey(pkiDir);
  const issuer = buildServiceAccountTokenIssuer({ privateKey: key.privateKey,
    issuer: o.issuer ?? DEFAULT_SA_ISSUER, audiences: o.audiences });
  const authenticate = buildServiceAccountTokenAuthenticator({
    issuers: [issuer.issuer], audiences: issuer.audiences, publicKeys: [key.publicKey],
    objects: { get: storedCoreObject(getDeps) },
  });
  return { issuer, authenticate };
}

/**
 * Reads a core (v1) object from the server's own storage, as the token authenticators do
 * (upstream reads through informers of the same storage): undefined when it does not exist.
 */
export function storedCoreObject(getDeps: () => ServiceDeps | undefined) {
  return async (resource: string, namespace: string | undefined, name: string):
    Promise<KubeObject | undefined> => {
    const deps = getDeps();
    if (!deps) throw kdpError('KDP_UNAVAILABLE', 'the API server is starting');
    const r = deps.catalog.find('', 'v1', resource);
    if (!r || name === '') return undefined;
    try {
      return (await readObject(deps, r, namespace, name)).obj;
    } catch (e) {
      if (isKdpError(e, 'KDP_NOT_FOUND')) return undefined;
      throw e;
    }
  };
}
