// serviceaccounts/token and the service-account token authenticator with the real kubectl
// (1.27 sends JSON, 1.33 protobuf): `kubectl create token` gives a bound JWT that authenticates
// as the ServiceAccount, and stops authenticating when expired, tampered with, for another
// audience, or when its ServiceAccount or bound Pod is deleted (or re-created).

import { readFileSync } from 'node:fs';
import { createPrivateKey } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServiceAccountTokenIssuer } from '../../src/apiserver/authn/service-account.js';
import { kubectlMissing, startKubectlHarness, type KubectlHarness } from './helpers/kubectl.js';

const MINORS = [27, 33];
const UNAUTHORIZED = 'error: You must be logged in to the server (Unauthorized)';

function claimsOf(token: string): Record<string, any> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}

describe.skipIf(MINORS.some(kubectlMissing))('kubectl create token', () => {
  let h: KubectlHarness;
  const k = (args: string[], minor = 33) => h.kubectl(args, { minor });
  /** `kubectl get pods` with the token: 403 names who the token is, 401 says it is not one. */
  const whoGetsPods = async (token: string) => {
    const r = await k(['--token', token, 'get', 'pods']);
    expect(r.code).not.toBe(0);
    return r.stderr.trim();
  };
  const saUid = async (name: string) =>
    (await k(['get', 'sa', name, '-o', 'jsonpath={.metadata.uid}'])).stdout;

  beforeAll(async () => {
    h = await startKubectlHarness({});
    expect((await k(['create', 'sa', 'robot'])).code).toBe(0);
  });
  afterAll(async () => { await h?.close(); });

  for (const minor of MINORS) {
    it(`kubectl 1.${minor}: the token is a bound JWT that authenticates as the ServiceAccount`,
      async () => {
        const r = await k(['create', 'token', 'robot'], minor);
        expect(r.stderr).toBe('');
        const token = r.stdout.trim();
        const c = claimsOf(token);
        expect(c.iss).toBe('https://kubernetes.default.svc.cluster.local');
        expect(c.aud).toEqual(['https://kubernetes.default.svc.cluster.local']);
        expect(c.sub).toBe('system:serviceaccount:default:robot');
        expect(c.exp - c.iat).toBe(3600);
        expect(c['kubernetes.io']).toEqual({ namespace: 'default',
          serviceaccount: { name: 'robot', uid: await saUid('robot') } });
        expect(await whoGetsPods(token)).toContain(
          'User "system:serviceaccount:default:robot" cannot list resource "pods"');
      });

    it(`kubectl 1.${minor}: --duration and --audience are honoured; under 10 minutes is refused`,
      async () => {
        const r = await k(['create', 'token', 'robot', '--duration=2h', '--audience=vault',
          '--audience=api'], minor);
        const c = claimsOf(r.stdout.trim());
        expect(c.exp - c.iat).toBe(7200);
        expect(c.aud).toEqual(['vault', 'api']);
        // Not an audience of the API server: no good here.
        expect(await whoGetsPods(r.stdout.trim())).toBe(UNAUTHORIZED);
        const short = await k(['create', 'token', 'robot', '--duration=5m'], minor);
        expect(short.code).not.toBe(0);
        expect(short.stderr).toContain('TokenRequest.authentication.k8s.io "" is invalid: ' +
          'spec.expirationSeconds: Invalid value: 300: may not specify a duration less than ' +
          '10 minutes');
      });
  }

  it('an unknown ServiceAccount is 404', async () => {
    const r = await k(['create', 'token', 'nobody']);
    expect(r.stderr).toContain('serviceaccounts "nobody" not found');
  });

  it('a pod-bound token names pod and node, and dies with the pod', async () => {
    await h.kubectl(['apply', '-f', await h.file('pod.yaml', `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec: {serviceAccountName: robot, nodeName: n1, containers: [{name: c, image: kdp/echo}]}
`)]);
    const uid = (await k(['get', 'pod', 'web', '-o', 'jsonpath={.metadata.uid}'])).stdout;
    const r = await k(['create', 'token', 'robot', '--bound-object-kind', 'Pod',
      '--bound-object-name', 'web']);
    const token = r.stdout.trim();
    expect(claimsOf(token)['kubernetes.io']).toMatchObject({ pod: { name: 'web', uid },
      node: { name: 'n1' } });
    expect(await whoGetsPods(token)).toContain('system:serviceaccount:default:robot');
    const wrongUid = await k(['create', 'token', 'robot', '--bound-object-kind', 'Pod',
      '--bound-object-name', 'web', '--bound-object-uid', 'not-it']);
    expect(wrongUid.stderr).toContain('the UID in the bound object reference (not-it) does not ' +
      'match the UID in record');
    const other = await k(['create', 'token', 'default', '--bound-object-kind', 'Pod',
      '--bound-object-name', 'web']);
    expect(other.stderr).toMatch(/not found|different serviceaccount name/);
    // A node (NodeRestriction) gets tokens only bound to its pods, by uid.
    const asNode = ['--as', 'system:node:n1', '--as-group', 'system:nodes'];
    const noUid = await k(['create', 'token', 'robot', ...asNode, '--bound-object-kind', 'Pod',
      '--bound-object-name', 'web']);
    expect(noUid.stderr).toContain('serviceaccounts "robot" is forbidden: node requested token ' +
      'with a pod binding without a uid');
    const unbound = await k(['create', 'token', 'robot', ...asNode]);
    expect(unbound.stderr).toContain('node requested token not bound to a pod');
    const byNode = await k(['create', 'token', 'robot', ...asNode, '--bound-object-kind', 'Pod',
      '--bound-object-name', 'web', '--bound-object-uid', uid]);
    expect(claimsOf(byNode.stdout.trim())['kubernetes.io'].pod).toEqual({ name: 'web', uid });
    await k(['delete', 'pod', 'web', '--grace-period=0', '--force']);
    expect(await whoGetsPods(token)).toBe(UNAUTHORIZED);
  });

  it('tampered and expired tokens are refused', async () => {
    const token = (await k(['create', 'token', 'robot'])).stdout.trim();
    const [hd, , sig] = token.split('.');
    const c = claimsOf(token);
    c.sub = 'system:serviceaccount:kube-system:admin';
    const tampered = `${hd}.${Buffer.from(JSON.stringify(c)).toString('base64url')}.${sig}`;
    expect(await whoGetsPods(tampered)).toBe(UNAUTHORIZED);
    // Signed with the cluster's own key, but expired two minutes ago (past the leeway).
    const key = createPrivateKey(readFileSync(join(h.dir, 'data', 'pki', 'sa.key'), 'utf8'));
    const now = Math.floor(Date.now() / 1000);
    const expired = buildServiceAccountTokenIssuer({ privateKey: key }).issue({
      namespace: 'default', serviceAccount: { name: 'robot', uid: await saUid('robot') },
      audiences: ['https://kubernetes.default.svc.cluster.local'], now: now - 3720,
      expirationSeconds: 3600, jti: 'x' }).token;
    expect(await whoGetsPods(expired)).toBe(UNAUTHORIZED);
  });

  it('a deleted and re-created ServiceAccount invalidates its old tokens', async () => {
    await k(['create', 'sa', 'temp']);
    const token = (await k(['create', 'token', 'temp'])).stdout.trim();
    expect(await whoGetsPods(token)).toContain('system:serviceaccount:default:temp');
    await k(['delete', 'sa', 'temp']);
    expect(await whoGetsPods(token)).toBe(UNAUTHORIZED);
    await k(['create', 'sa', 'temp']);
    expect(await whoGetsPods(token)).toBe(UNAUTHORIZED);
    const fresh = (await k(['create', 'token', 'temp'])).stdout.trim();
    expect(await whoGetsPods(fresh)).toContain('system:serviceaccount:default:temp');
  });
});
