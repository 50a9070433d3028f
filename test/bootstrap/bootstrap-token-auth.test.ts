// Bootstrap tokens over real HTTPS: the authenticator (user system:bootstrap:<id> in
// system:bootstrappers plus the token's extra groups; expired, wrong secret, no authentication
// usage, bad extra group, malformed → 401), the tokencleaner deleting an expired token, and
// the bootstrapsigner's cluster-info signatures as `kdp node join`'s discovery checks them —
// a tampered kubeconfig or signature is refused before anything is trusted.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:https';
import { ADMIN_USER } from '../../src/apiserver/app.js';
import { startApiServer, type RunningApiServer } from '../../src/apiserver/start.js';
import { buildInProcessClient } from '../../src/client/in-process.js';
import type { Client, KubeObject } from '../../src/client/types.js';
import { buildControllerManager, type ControllerManager } from '../../src/controllers/manager.js';
import { clusterInfoObjects, caCertHash, JWS_KEY_PREFIX } from '../../src/bootstrap/cluster-info.js';
import { computeDetachedSignature } from '../../src/bootstrap/jws.js';
import { discover } from '../../src/bootstrap/join.js';
import { createToken, ensureInitToken } from '../../src/bootstrap/token-store.js';
import { formatToken, generateToken, tokenSecret, type BootstrapToken } from '../../src/bootstrap/token.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../helpers/cluster.js';

const SECRETS = { group: '', version: 'v1', resource: 'secrets', namespace: 'kube-system' } as const;
const CMS = { group: '', version: 'v1', resource: 'configmaps', namespace: 'kube-public' } as const;

describe('bootstrap tokens', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdp-boottok-'));
  let api: RunningApiServer;
  let admin: Client;
  let manager: ControllerManager;

  /** Who the API server says `token` is (SelfSubjectReview), or the HTTP status. */
  function whoami(token: string): Promise<{ status: number; user?: { username: string; groups: string[] } }> {
    return new Promise((resolve, reject) => {
      const body = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
      const r = request(`${api.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, { method: 'POST',
        ca: api.pki.caCertPem, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => { text += d.toString(); });
        res.on('end', () => resolve({ status: res.statusCode!, ...(res.statusCode === 201
          ? { user: (JSON.parse(text) as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo } : {}) }));
      });
      r.on('error', reject);
      r.end(body);
    });
  }

  async function secretFor(t: BootstrapToken, o: { expires?: Date; usages?: string[]; groups?: string[] } = {}) {
    await admin.create(SECRETS, tokenSecret({ token: t, usages: o.usages ?? ['authentication', 'signing'],
      groups: o.groups ?? [], ...(o.expires ? { expires: o.expires } : {}) }));
  }

  beforeAll(async () => {
    api = await startApiServer({ dataDir: dir, port: 0 });
    admin = buildInProcessClient(api.server.service, ADMIN_USER);
    manager = buildControllerManager({ client: admin, options: { controllers: ['tokencleaner', 'bootstrapsigner'] } });
    await manager.start();
  }, 60_000);
  afterAll(async () => {
    await manager?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('computes upstream\'s detached JWS (cluster-bootstrap jws_test.go vectors)', () => {
    const content = 'Hello from the other side. I must have called a thousand times.';
    expect(computeDetachedSignature(content, 'joshua', 'my voice is my passcode'))
      .toBe('eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8');
    expect(computeDetachedSignature('', 'joshua', 'my voice is my passcode'))
      .toBe('eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..7Ui1ALizW4jXphVUB7xUqC9vLYLL9RZeOFfVLoB7Tgk');
  });

  it('authenticates a valid token as system:bootstrap:<id> with its groups', async () => {
    const t = await createToken(admin);
    const me = await whoami(formatToken(t));
    expect(me.status).toBe(201);
    expect(me.user!.username).toBe(`system:bootstrap:${t.id}`);
    expect(me.user!.groups).toEqual(['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token',
      'system:authenticated']);
  });

  it('refuses (401) an expired token, a wrong secret, a token not for authentication, a bad extra group, an unknown id', async () => {
    const expired = generateToken();
    await secretFor(expired, { expires: new Date(Date.now() - 1000) });
    expect((await whoami(formatToken(expired))).status).toBe(401);
    const good = generateToken();
    await secretFor(good);
    expect((await whoami(`${good.id}.${'0'.repeat(16)}`)).status).toBe(401);
    const signingOnly = generateToken();
    await secretFor(signingOnly, { usages: ['signing'] });
    expect((await whoami(formatToken(signingOnly))).status).toBe(401);
    const badGroup = generateToken();
    await secretFor(badGroup, { groups: ['system:masters'] });
    expect((await whoami(formatToken(badGroup))).status).toBe(401);
    expect((await whoami(formatToken(generateToken()))).status).toBe(401);
    // A malformed token (not <id>.<secret>, not a JWT, not in the token file) is a 401 too.
    expect((await whoami('ABCDEF.0123456789abcdef')).status).toBe(401);
    expect((await whoami(formatToken(good))).status).toBe(201);
  });

  it('tokencleaner deletes a token once it expires, and not before', async () => {
    const t = generateToken();
    await secretFor(t, { expires: new Date(Date.now() + 1500) });
    await new Promise((r) => setTimeout(r, 500));
    expect((await admin.list<KubeObject>(SECRETS)).items.some((s) => s.metadata.name === `bootstrap-token-${t.id}`)).toBe(true);
    await waitFor(async () => !(await admin.list<KubeObject>(SECRETS)).items
      .some((s) => s.metadata.name === `bootstrap-token-${t.id}`), 20_000, 'expired token deleted');
  });

  it('kdp up\'s init step reuses its token and moves cluster-info to the new address on restart', async () => {
    const first = await ensureInitToken(admin, 'https://127.0.0.1:1', api.pki.caCertPem);
    const again = await ensureInitToken(admin, api.url, api.pki.caCertPem);
    expect(again).toEqual(first);
    const cm = await admin.get<KubeObject & { data: Record<string, string> }>(CMS, 'cluster-info');
    expect(cm.data.kubeconfig).toContain(`server: ${api.url}`);
    await waitFor(async () => (await admin.get<KubeObject & { data: Record<string, string> }>(CMS, 'cluster-info'))
      .data[`${JWS_KEY_PREFIX}${first.id}`] === computeDetachedSignature(cm.data.kubeconfig!, first.id, first.secret),
    10_000, 're-signed kubeconfig');
  });

  it('bootstrapsigner signs cluster-info per signing token; discovery verifies it and refuses tampering', async () => {
    const t = await ensureInitToken(admin, api.url, api.pki.caCertPem);
    const pin = caCertHash(api.pki.caCertPem);
    const opts = { server: api.url, token: formatToken(t), caCertHashes: [pin], nodeName: 'n9', dataDir: dir,
      discoveryTimeoutMs: 10_000 };
    const info = await discover(opts, t);
    expect(info).toEqual({ server: api.url, caPem: api.pki.caCertPem });
    const cm = await admin.get<KubeObject & { data: Record<string, string> }>(CMS, 'cluster-info');
    expect(cm.data[`${JWS_KEY_PREFIX}${t.id}`]).toBe(computeDetachedSignature(cm.data.kubeconfig!, t.id, t.secret));
    // A deleted token's signature goes away.
    const gone = await createToken(admin);
    await waitFor(async () => !!(await admin.get<KubeObject & { data: Record<string, string> }>(CMS, 'cluster-info'))
      .data[`${JWS_KEY_PREFIX}${gone.id}`], 10_000, 'second signature');
    await admin.delete(SECRETS, `bootstrap-token-${gone.id}`);
    await waitFor(async () => !(await admin.get<KubeObject & { data: Record<string, string> }>(CMS, 'cluster-info'))
      .data[`${JWS_KEY_PREFIX}${gone.id}`], 10_000, 'signature removed');
    // The wrong pin, the wrong secret (same id), a kubeconfig that does not match its signature.
    await expect(discover({ ...opts, caCertHashes: [`sha256:${'0'.repeat(64)}`] }, t))
      .rejects.toThrow('cluster CA found in cluster-info ConfigMap is invalid: none of the public keys');
    await expect(discover(opts, { id: t.id, secret: 'x'.repeat(16) }))
      .rejects.toThrow("failed to verify JWS signature of received cluster info object, can't trust this API Server");
    // Tamper with the kubeconfig as a man in the middle would (point it at another server); the
    // signer re-signs only with tokens it knows, so stop it first.
    await manager.stop();
    const tampered = clusterInfoObjects('https://evil.example:6443', api.pki.caCertPem)[0] as KubeObject & { data: Record<string, string> };
    const cur = await admin.get<KubeObject & { data: Record<string, string> }>(CMS, 'cluster-info');
    await admin.update(CMS, { ...cur, data: { ...cur.data, kubeconfig: tampered.data.kubeconfig! } } as KubeObject);
    await expect(discover(opts, t)).rejects.toThrow("failed to verify JWS signature of received cluster info object");
  }, 60_000);
});
