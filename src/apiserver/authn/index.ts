// Request authentication as kube-apiserver's union authenticator with the options kdp serves:
// x509 client certificates first, then static bearer tokens (`--token-auth-file`), bootstrap
// tokens (`--enable-bootstrap-token-auth`), service-account JWTs. A request
// with no usable credentials yields null (the caller decides on anonymous); a bearer token that
// matches nothing throws KDP_UNAUTHORIZED, as upstream's bearertoken authenticator does.

import { readFileSync } from 'node:fs';
import type { TLSSocket } from 'node:tls';
import { kdpError } from '../../errors.js';
import type { AuthnRequest, Authenticator, UserInfo } from '../pipeline-types.js';
import type { BootstrapTokenAuthenticator } from './bootstrap-token.js';
import type { ServiceAccountTokenAuthenticator } from './service-account.js';
import { parseTokenFile } from './token-file.js';

export { formatTokenLine, parseTokenFile, type TokenEntry } from './token-file.js';

export const ALL_AUTHENTICATED = 'system:authenticated';
export const ALL_UNAUTHENTICATED = 'system:unauthenticated';
export const ANONYMOUS_USER = 'system:anonymous';

export interface AuthenticatorOptions {
  /** Path of a token file in upstream's CSV format; read once, at build time. */
  readonly tokenFile?: string;
  /** Accept the verified TLS client certificate's subject (user = CN, groups = O). */
  readonly clientCertificates?: boolean;
  /** Bound service-account tokens (JWTs with our issuer), tried after the token file. */
  readonly serviceAccountTokens?: ServiceAccountTokenAuthenticator;
  /** Bootstrap tokens (`<id>.<secret>` Secrets in kube-system), tried after the token file. */
  readonly bootstrapTokens?: BootstrapTokenAuthenticator;
}

/** An authenticator that never needs to read (no service-account tokens). */
export interface SyncAuthenticator extends Authenticator {
  authenticate(req: AuthnRequest): UserInfo | null;
}

/** The user of requests without credentials (when anonymous access is on). */
export function anonymousUser(): UserInfo {
  return { name: ANONYMOUS_USER, groups: [ALL_UNAUTHENTICATED] };
}

/** As upstream's AuthenticatedGroupAdder. */
function withAuthenticatedGroup(u: UserInfo): UserInfo {
  if (u.groups.some((g) => g === ALL_AUTHENTICATED || g === ALL_UNAUTHENTICATED)) return u;
  return { ...u, groups: [...u.groups, ALL_AUTHENTICATED] };
}

function header(req: AuthnRequest, name: string): string | undefined {
  const v = req.headers[name] ?? req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** The bearer token as upstream extracts it, or undefined when none is offered. */
export function bearerToken(req: AuthnRequest): string | undefined {
  const auth = (header(req, 'authorization') ?? '').trim();
  if (auth === '') return undefined;
  const parts = auth.split(' ');
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return undefined;
  return parts[1] === '' ? undefined : parts[1];
}

function loadTokens(path: string): Map<string, UserInfo> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw kdpError('KDP_CONFIG', `cannot read token file ${path}: ${(e as Error).message}`, {}, e);
  }
  const m = new Map<string, UserInfo>();
  for (const e of parseTokenFile(text, path)) m.set(e.token, e.user);
  return m;
}

export function buildAuthenticator(opts: AuthenticatorOptions & {
  serviceAccountTokens?: undefined; bootstrapTokens?: undefined }): SyncAuthenticator;
export function buildAuthenticator(opts: AuthenticatorOptions): Authenticator;
export function buildAuthenticator(opts: AuthenticatorOptions): Authenticator {
  const tokens = opts.tokenFile === undefined ? undefined : loadTokens(opts.tokenFile);
  const sa = opts.serviceAccountTokens;
  const boot = opts.bootstrapTokens;
  return {
    authenticate(req: AuthnRequest): UserInfo | null | Promise<UserInfo> {
      const peer = req.peerCertificate;
      if (opts.clientCertificates && peer && peer.subjectCN !== '') {
        return withAuthenticatedGroup({ name: peer.subjectCN, groups: [...peer.subjectO] });
      }
      if (tokens === undefined && sa === undefined && boot === undefined) return null;
      const token = bearerToken(req);
      if (token === undefined) return null;
      const user = tokens?.get(token);
      if (user) return withAuthenticatedGroup(user);
      // As upstream's token union: the next token authenticator; none left is a 401.
      const pending = boot?.(token) ?? sa?.(token);
      if (pending) return pending.then(withAuthenticatedGroup);
      throw kdpError('KDP_UNAUTHORIZED', 'Unauthorized');
    },
  };
}

/**
 * The verified client certificate of a TLS connection in the form `AuthnRequest` wants, or
 * undefined when the peer sent none or the CA did not sign it (`socket.authorized` false).
 */
export function peerCertificateOf(
  socket: Pick<TLSSocket, 'authorized' | 'getPeerCertificate'> | undefined,
): AuthnRequest['peerCertificate'] {
  if (!socket || !socket.authorized) return undefined;
  const cert = socket.getPeerCertificate();
  if (!cert || !cert.subject) return undefined;
  const asList = (v: string | string[] | undefined): string[] =>
    v === undefined ? [] : Array.isArray(v) ? v : [v];
  return { subjectCN: asList(cert.subject.CN)[0] ?? '', subjectO: asList(cert.subject.O) };
}

/**
 * Why the TLS peer's certificate failed verification against the client CA, or undefined when
 * the peer sent no certificate, it verified, or the connection is not TLS. As upstream's x509
 * authenticator, a certificate that is presented and fails (another CA, expired, not yet valid,
 * not for client auth) is an authentication error, never the absence of credentials.
 */
export function peerCertificateRejection(
  socket: Partial<Pick<TLSSocket, 'authorized' | 'authorizationError' | 'getPeerCertificate'>>
    | undefined,
): string | undefined {
  if (!socket || socket.authorized || typeof socket.getPeerCertificate !== 'function') {
    return undefined;
  }
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  const reason = socket.authorizationError;
  return `verifying certificate SN=${cert.serialNumber} failed: ` +
    `${reason instanceof Error ? reason.message : String(reason)}`;
}
