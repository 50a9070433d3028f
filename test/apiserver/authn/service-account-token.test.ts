import { generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/client/types.js';
import {
  buildServiceAccountTokenAuthenticator, buildServiceAccountTokenIssuer, DEFAULT_SA_ISSUER,
  type ServiceAccountObjects,
} from '../../../src/apiserver/authn/service-account.js';
import { parseJwt, signJwt } from '../../../src/apiserver/authn/sa-jwt.js';
import { keyIdOf } from '../../../src/apiserver/pki/service-account-key.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
const NOW = 1_800_000_000;

function objects(list: KubeObject[]): ServiceAccountObjects & { list: KubeObject[] } {
  return {
    list,
    async get(resource, namespace, name) {
      const kind = { serviceaccounts: 'ServiceAccount', pods: 'Pod', secrets: 'Secret',
        nodes: 'Node' }[resource];
      return list.find((o) => o.kind === kind && o.metadata.name === name &&
        (namespace === undefined || o.metadata.namespace === namespace));
    },
  };
}

const sa = (uid = 'sa-uid'): KubeObject => ({ apiVersion: 'v1', kind: 'ServiceAccount',
  metadata: { name: 'default', namespace: 'default', uid } });
const pod = (uid = 'pod-uid'): KubeObject => ({ apiVersion: 'v1', kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', uid }, spec: { nodeName: 'n1' } });
const node = (uid = 'node-uid'): KubeObject => ({ apiVersion: 'v1', kind: 'Node',
  metadata: { name: 'n1', uid } });

const issuer = buildServiceAccountTokenIssuer({ privateKey, newJti: () => 'jti-1' });

function issue(more: Partial<Parameters<typeof issuer.issue>[0]> = {}): string {
  return issuer.issue({ namespace: 'default', serviceAccount: { name: 'default', uid: 'sa-uid' },
    audiences: issuer.audiences, now: NOW, expirationSeconds: 3600, jti: 'jti-1', ...more }).token;
}

function authn(objs: ServiceAccountObjects, at = NOW, keys: KeyObject[] = [publicKey]) {
  return buildServiceAccountTokenAuthenticator({ issuers: [DEFAULT_SA_ISSUER],
    audiences: [DEFAULT_SA_ISSUER], publicKeys: keys, objects: objs, now: () => at * 1000 });
}

async function reason(p: Promise<unknown> | undefined): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect((e as { code?: string }).code).toBe('KDP_UNAUTHORIZED');
    return String(((e as { cause?: Error }).cause)?.message);
  }
  throw new Error('expected a rejection');
}

describe('bound service-account token: claims', () => {
  it('carries upstream claims, sorted keys, RS256 with the key id as kid', () => {
    const t = issue({ pod: { name: 'web', uid: 'pod-uid' }, node: { name: 'n1', uid: 'node-uid' } });
    const jwt = parseJwt(t)!;
    expect(jwt.header).toEqual({ alg: 'RS256', kid: keyIdOf(publicKey) });
    expect(Object.keys(jwt.payload)).toEqual(['aud', 'exp', 'iat', 'iss', 'jti', 'kubernetes.io',
      'nbf', 'sub']);
    expect(jwt.payload).toEqual({
      aud: ['https://kubernetes.default.svc.cluster.local'], exp: NOW + 3600, iat: NOW,
      iss: 'https://kubernetes.default.svc.cluster.local', jti: 'jti-1', nbf: NOW,
      sub: 'system:serviceaccount:default:default',
      'kubernetes.io': { namespace: 'default', node: { name: 'n1', uid: 'node-uid' },
        pod: { name: 'web', uid: 'pod-uid' }, serviceaccount: { name: 'default', uid: 'sa-uid' } },
    });
  });

  it('a node-bound token names the node; warnafter when asked', () => {
    const jwt = parseJwt(issue({ node: { name: 'n1', uid: 'node-uid' }, warnAfterSeconds: 3607 }))!;
    expect(jwt.payload['kubernetes.io']).toEqual({ namespace: 'default',
      node: { name: 'n1', uid: 'node-uid' }, serviceaccount: { name: 'default', uid: 'sa-uid' },
      warnafter: NOW + 3607 });
  });
});

describe('bound service-account token: authentication', () => {
  it('a valid token is the service account: groups and credential id as upstream', async () => {
    const u = await authn(objects([sa()]))(issue());
    expect(u).toEqual({ name: 'system:serviceaccount:default:default', uid: 'sa-uid',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:default'],
      extra: { 'authentication.kubernetes.io/credential-id': ['JTI=jti-1'] } });
  });

  it('a pod-bound token adds pod and node extras', async () => {
    const t = issue({ pod: { name: 'web', uid: 'pod-uid' }, node: { name: 'n1', uid: 'node-uid' } });
    const u = await authn(objects([sa(), pod()]))(t);
    expect(u!.extra).toEqual({
      'authentication.kubernetes.io/pod-name': ['web'],
      'authentication.kubernetes.io/pod-uid': ['pod-uid'],
      'authentication.kubernetes.io/credential-id': ['JTI=jti-1'],
      'authentication.kubernetes.io/node-name': ['n1'],
      'authentication.kubernetes.io/node-uid': ['node-uid'],
    });
  });

  it('tokens that are not ours are left to other authenticators', () => {
    const a = authn(objects([sa()]));
    expect(a('static-token')).toBeUndefined();
    expect(a('a.b.c')).toBeUndefined();
    const foreign = signJwt({ iss: 'https://elsewhere', sub: 'x' }, privateKey, 'k');
    expect(a(foreign)).toBeUndefined();
  });

  it('expiry has one minute of leeway, then "service account token has expired"', async () => {
    const objs = objects([sa()]);
    const t = issue();
    await expect(authn(objs, NOW + 3600 + 60)(t)).resolves.toBeTruthy();
    expect(await reason(authn(objs, NOW + 3600 + 61)(t))).toBe('service account token has expired');
    expect(await reason(authn(objs, NOW - 61)(t))).toBe('service account token is not valid yet');
  });

  it('a tampered payload or a foreign key fails the signature', async () => {
    const objs = objects([sa()]);
    const [h, p, s] = issue().split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    claims['kubernetes.io'].serviceaccount.name = 'admin';
    const tampered = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
    expect(await reason(authn(objs)(tampered))).toMatch(/cryptographic/);
    const forged = buildServiceAccountTokenIssuer({ privateKey: other.privateKey }).issue({
      namespace: 'default', serviceAccount: { name: 'default', uid: 'sa-uid' },
      audiences: [DEFAULT_SA_ISSUER], now: NOW, expirationSeconds: 3600, jti: 'x' }).token;
    expect(await reason(authn(objs)(forged))).toBe('invalid signature, no keys found');
  });

  it('an audience the API server does not serve is refused', async () => {
    expect(await reason(authn(objects([sa()]))(issue({ audiences: ['vault'] })))).toBe(
      'token audiences ["vault"] is invalid for the target audiences ' +
      '["https://kubernetes.default.svc.cluster.local"]');
  });

  it('a deleted or re-created service account, pod or node invalidates the token', async () => {
    expect(await reason(authn(objects([]))(issue()))).toBe('serviceaccounts "default" not found');
    expect(await reason(authn(objects([sa('new-uid')]))(issue()))).toBe(
      'service account UID (new-uid) does not match claim (sa-uid)');
    const podToken = issue({ pod: { name: 'web', uid: 'pod-uid' } });
    expect(await reason(authn(objects([sa()]))(podToken))).toBe(
      'service account token has been invalidated');
    expect(await reason(authn(objects([sa(), pod('p2')]))(podToken))).toBe(
      'pod UID (p2) does not match service account pod ref claim (pod-uid)');
    const nodeToken = issue({ node: { name: 'n1', uid: 'node-uid' } });
    await expect(authn(objects([sa(), node()]))(nodeToken)).resolves.toMatchObject({
      extra: { 'authentication.kubernetes.io/node-name': ['n1'] } });
    expect(await reason(authn(objects([sa(), node('n2')]))(nodeToken))).toBe(
      'node UID (n2) does not match service account node ref claim (node-uid)');
  });

  it('a service account being deleted for over a minute no longer authenticates', async () => {
    const gone = sa();
    gone.metadata.deletionTimestamp = new Date((NOW - 61) * 1000).toISOString();
    expect(await reason(authn(objects([gone]))(issue()))).toBe(
      'service account default/default has been deleted');
  });
});
