// Bootstrap tokens as k8s.io/cluster-bootstrap defines them (token/api, token/util, secret):
// a token `<id>.<secret>` ([a-z0-9]{6}.[a-z0-9]{16}) lives in the Secret
// `kube-system/bootstrap-token-<id>` of type `bootstrap.kubernetes.io/token`, whose data keys
// say what it may do (authenticate, sign cluster-info), until when, and which extra groups its
// user gets. Shared by the API server's authenticator, the tokencleaner and bootstrapsigner
// controllers, `kdp token` and `kdp node join`.

import { randomInt } from 'node:crypto';
import type { KubeObject } from '../client/types.js';
import { parseRfc3339 } from '../util/rfc3339.js';

export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
export const BOOTSTRAP_TOKEN_NAMESPACE = 'kube-system';
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAP_DEFAULT_GROUP = 'system:bootstrappers';
/** kubeadm's group for the tokens `kubeadm init` / `kubeadm token create` make. */
export const KUBEADM_NODE_TOKEN_GROUP = 'system:bootstrappers:kubeadm:default-node-token';

export const KEY_TOKEN_ID = 'token-id';
export const KEY_TOKEN_SECRET = 'token-secret';
export const KEY_EXPIRATION = 'expiration';
export const KEY_DESCRIPTION = 'description';
export const KEY_EXTRA_GROUPS = 'auth-extra-groups';
export const USAGE_PREFIX = 'usage-bootstrap-';
export const USAGES = ['authentication', 'signing'] as const;

/** upstream BootstrapTokenPattern, BootstrapTokenIDPattern, BootstrapGroupPattern. */
export const TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const TOKEN_ID_PATTERN = /^[a-z0-9]{6}$/;
const GROUP_PATTERN = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;
const CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface BootstrapToken {
  readonly id: string;
  readonly secret: string;
}

/** The two halves of `<id>.<secret>`, or undefined when `text` is not a bootstrap token. */
export function parseToken(text: string): BootstrapToken | undefined {
  const m = TOKEN_PATTERN.exec(text);
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
}

export function formatToken(t: BootstrapToken): string {
  return `${t.id}.${t.secret}`;
}

export function isValidTokenId(id: string): boolean {
  return TOKEN_ID_PATTERN.test(id);
}

/** A fresh random token (upstream GenerateBootstrapToken). */
export function generateToken(): BootstrapToken {
  const pick = (n: number) => Array.from({ length: n }, () => CHARS[randomInt(CHARS.length)]).join('');
  return { id: pick(6), secret: pick(16) };
}

export function secretName(id: string): string {
  return `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`;
}

/** upstream ValidateBootstrapGroupName's message, or undefined when `g` is allowed. */
export function groupProblem(g: string): string | undefined {
  return GROUP_PATTERN.test(g) ? undefined
    : `bootstrap group ${JSON.stringify(g)} is invalid (must match ${GROUP_PATTERN.source})`;
}

/** A bootstrap token Secret's data, decoded (the API stores base64). */
export type TokenData = Readonly<Record<string, string>>;

export function secretData(s: KubeObject): TokenData {
  const data = (s as { data?: Record<string, string> }).data ?? {};
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64')
    .toString('utf8')]));
}

/** The expiration instant (ms), undefined without one, NaN when it is not RFC 3339 as Go's
 *  time.Parse reads it (Date.parse would take `2030-01-01` or `Jan 1 2030`: upstream does not). */
export function expirationOf(d: TokenData): number | undefined {
  const e = d[KEY_EXPIRATION];
  if (e === undefined || e === '') return undefined;
  const ns = parseRfc3339(e);
  return ns === undefined ? NaN : Number(ns / 1_000_000n);
}

/** upstream HasExpired: an unparsable expiration counts as expired (fail closed). */
export function hasExpired(d: TokenData, now: number): boolean {
  const at = expirationOf(d);
  return at !== undefined && !(at > now);
}

/** Extra groups of `auth-extra-groups` (comma separated, as written: upstream GetGroups trims
 *  nothing, so ` system:bootstrappers:x` is a bad group), each checked. */
export function extraGroupsOf(d: TokenData): { groups: string[]; problem?: string } {
  const raw = d[KEY_EXTRA_GROUPS] ?? '';
  const groups = raw === '' ? [] : raw.split(',');
  const problem = groups.map(groupProblem).find((p) => p !== undefined);
  return problem ? { groups, problem } : { groups };
}

export interface NewTokenSecret {
  readonly token: BootstrapToken;
  readonly description?: string;
  /** Absent: never expires (kubeadm `--ttl 0`). */
  readonly expires?: Date;
  readonly usages: readonly string[];
  readonly groups: readonly string[];
}

/** The Secret kubeadm writes for a token (encodeTokenSecretData). */
export function tokenSecret(o: NewTokenSecret): KubeObject {
  const data: Record<string, string> = {
    [KEY_TOKEN_ID]: o.token.id, [KEY_TOKEN_SECRET]: o.token.secret,
  };
  if (o.description) data[KEY_DESCRIPTION] = o.description;
  // RFC 3339 without fractional seconds, as kubeadm's time.Format(time.RFC3339).
  if (o.expires) data[KEY_EXPIRATION] = `${o.expires.toISOString().slice(0, 19)}Z`;
  for (const u of o.usages) data[`${USAGE_PREFIX}${u}`] = 'true';
  if (o.groups.length > 0) data[KEY_EXTRA_GROUPS] = o.groups.join(',');
  return {
    apiVersion: 'v1', kind: 'Secret',
    metadata: { name: secretName(o.token.id), namespace: BOOTSTRAP_TOKEN_NAMESPACE },
    type: BOOTSTRAP_TOKEN_SECRET_TYPE,
    data: Object.fromEntries(Object.entries(data).map(([k, v]) =>
      [k, Buffer.from(v, 'utf8').toString('base64')])),
  } as KubeObject;
}

/** The token a Secret holds when it is a well-formed bootstrap token Secret (upstream
 *  ParseSecret's checks: name, type, id and secret), else undefined. */
export function tokenOfSecret(s: KubeObject): { token: BootstrapToken; data: TokenData } | undefined {
  if ((s as { type?: string }).type !== BOOTSTRAP_TOKEN_SECRET_TYPE) return undefined;
  const name = s.metadata.name ?? '';
  if (!name.startsWith(BOOTSTRAP_TOKEN_SECRET_PREFIX)) return undefined;
  const d = secretData(s);
  const id = d[KEY_TOKEN_ID] ?? '';
  const secret = d[KEY_TOKEN_SECRET] ?? '';
  if (id !== name.slice(BOOTSTRAP_TOKEN_SECRET_PREFIX.length) || !parseToken(`${id}.${secret}`)) {
    return undefined;
  }
  return { token: { id, secret }, data: d };
}

export function usageEnabled(d: TokenData, usage: (typeof USAGES)[number]): boolean {
  return d[`${USAGE_PREFIX}${usage}`] === 'true';
}
