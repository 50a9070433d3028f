// A client certificate that fails verification is an authentication error (401 Status), as
// upstream's x509 authenticator makes it, never an anonymous request: on the fast lane (JSON
// resource requests), on the Fastify path (/version) and for writes (nothing is stored).
// Certificates are made here: a foreign CA, and leaves of the cluster CA that are expired, not
// yet valid, or for server auth only.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueCa, issueLeaf } from '../../../src/apiserver/pki/index.js';
import type { CertPair } from '../../../src/apiserver/pki/index.js';
import { startApiServer } from '../../../src/apiserver/start.js';
import type { RunningApiServer } from '../../../src/apiserver/start.js';

type X509Crypto = Parameters<typeof x509.X509CertificateGenerator.create>[1];
const crypto = webcrypto as unknown as NonNullable<X509Crypto>;
const KEY_ALG = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const DAY_MS = 86_400_000;

/** A client certificate for `cn` in `system:masters`, signed by `ca`, valid in [from, to]. */
async function clientCert(ca: CertPair, cn: string, from: Date, to: Date): Promise<CertPair> {
  const keys = await webcrypto.subtle.generateKey(KEY_ALG, true, ['sign', 'verify']);
  const caCert = new x509.X509Certificate(ca.certPem);
  const signingKey = await webcrypto.subtle.importKey('pkcs8',
    x509.PemConverter.decodeFirst(ca.keyPem), KEY_ALG, false, ['sign']);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: '01' + Date.now().toString(16), subject: [{ CN: [cn] }, { O: ['system:masters'] }],
    issuer: caCert.subject, publicKey: keys.publicKey, signingKey,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' }, notBefore: from, notAfter: to,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth], false),
    ],
  }, crypto);
  const der = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { certPem: cert.toString('pem'), keyPem: x509.PemConverter.encode(der, 'PRIVATE KEY') };
}

interface Res { status: number; body: any }

let dir: string;
let api: RunningApiServer;
const certs: Record<string, CertPair> = {};

function send(method: string, path: string, cert?: CertPair, headers: Record<string, string> = {},
  body?: unknown): Promise<Res> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(`${api.url}${path}`, {
      method, agent: false, ca: api.pki.caCertPem, cert: cert?.certPem, key: cert?.keyPem,
      headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { text += d; });
      res.on('end', () => {
        let parsed: unknown;
        try { parsed = JSON.parse(text); } catch { parsed = text; }
        resolve({ status: res.statusCode!, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
  message: 'Unauthorized', reason: 'Unauthorized', code: 401 };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kdp-bad-certs-'));
  api = await startApiServer({ dataDir: join(dir, 'data'), port: 0 });
  const ca = { certPem: api.pki.caCertPem, keyPem: api.pki.caKeyPem };
  const now = Date.now();
  certs.admin = { certPem: api.pki.adminCertPem, keyPem: api.pki.adminKeyPem };
  certs.foreign = await issueLeaf(await issueCa('not-the-cluster-ca'),
    { commonName: 'mallory', organizations: ['system:masters'], usage: 'client' });
  certs.expired = await clientCert(ca, 'old-admin', new Date(now - 30 * DAY_MS),
    new Date(now - DAY_MS));
  certs.notYetValid = await clientCert(ca, 'future-admin', new Date(now + DAY_MS),
    new Date(now + 30 * DAY_MS));
  certs.serverOnly = await issueLeaf(ca, { commonName: 'apiserver-as-client',
    organizations: ['system:masters'], usage: 'server', sans: ['IP:127.0.0.1'] });
});
afterAll(async () => {
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a client certificate that fails verification is answered 401, not anonymous', () => {
  it('the cluster CA\'s admin certificate authenticates (control)', async () => {
    expect((await send('GET', '/api/v1/namespaces/default/configmaps', certs.admin)).status)
      .toBe(200);
    expect((await send('GET', '/version', certs.admin)).status).toBe(200);
  });

  it('without a certificate the request is anonymous (/version is public)', async () => {
    expect((await send('GET', '/version')).status).toBe(200);
  });

  const BAD = { foreign: 'signed by another CA', expired: 'expired', notYetValid: 'not yet valid',
    serverOnly: 'for server auth only' };
  for (const [name, what] of Object.entries(BAD)) {
    it(`a certificate ${what} gets 401 on the fast lane and on the Fastify path`, async () => {
      const list = await send('GET', '/api/v1/namespaces/default/configmaps', certs[name]);
      expect(list).toEqual({ status: 401, body: UNAUTHORIZED });
      const version = await send('GET', '/version', certs[name]);
      expect(version).toEqual({ status: 401, body: UNAUTHORIZED });
    });
  }

  it('a create with a foreign certificate is refused and stores nothing', async () => {
    const before = await send('GET', '/api/v1/namespaces/default/configmaps', certs.admin);
    const c = await send('POST', '/api/v1/namespaces/default/configmaps', certs.foreign, {},
      { metadata: { name: 'from-mallory' }, data: { a: '1' } });
    expect(c).toEqual({ status: 401, body: UNAUTHORIZED });
    const after = await send('GET', '/api/v1/namespaces/default/configmaps', certs.admin);
    expect(after.body.metadata.resourceVersion).toBe(before.body.metadata.resourceVersion);
    expect((await send('GET', '/api/v1/namespaces/default/configmaps/from-mallory',
      certs.admin)).status).toBe(404);
  });

  it('a valid bearer token still authenticates beside a rejected certificate', async () => {
    const r = await send('GET', '/api/v1/namespaces/default/configmaps', certs.expired,
      { authorization: `Bearer ${api.pki.adminToken}` });
    expect(r.status).toBe(200);
  });

  it('a wrong bearer token beside a rejected certificate is 401', async () => {
    const r = await send('GET', '/version', certs.foreign, { authorization: 'Bearer nope' });
    expect(r).toEqual({ status: 401, body: UNAUTHORIZED });
  });
});
