// The bootstrap token and CSR checks at upstream's edges, without a server: a token's
// `expiration` is RFC 3339 as Go's time.Parse reads it (anything else counts as expired, fail
// closed), `auth-extra-groups` are taken as written (no trimming) and come back sorted with
// system:bootstrappers; the kube-apiserver-client signer requires `client auth`; a kubelet
// client CSR with SANs is refused in upstream's words; kdp's lab auto-approval of kubelet-serving
// never covers an address (or name) another Node has.

import { describe, expect, it } from 'vitest';
import { KUBE_APISERVER_CLIENT_SIGNER, KUBELET_CLIENT_SIGNER, parseCsrPem } from '../../src/api/certificates.js';
import { buildBootstrapTokenAuthenticator } from '../../src/apiserver/authn/bootstrap-token.js';
import { X509Certificate } from 'node:crypto';
import { createCsr, signCsr } from '../../src/apiserver/pki/sign-csr.js';
import { issueCa } from '../../src/apiserver/pki/issue.js';
import { formatToken, generateToken, KEY_EXPIRATION, KEY_EXTRA_GROUPS, tokenSecret } from '../../src/bootstrap/token.js';
import { signerProblem } from '../../src/controllers/certificates/signer.js';
import { servingApprovable } from '../../src/controllers/certificates/approver.js';
import type { Node } from '../../src/api/types.js';
import type { CertificateSigningRequest } from '../../src/api/certificates.js';
import type { KubeObject } from '../../src/client/types.js';
import { parseRfc3339 } from '../../src/util/rfc3339.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');

/** Who the authenticator says a token is whose Secret has `data` overridden; 'refused' on 401. */
async function authenticate(data: Record<string, string>): Promise<readonly string[] | 'refused'> {
  const token = generateToken();
  const secret = tokenSecret({ token, usages: ['authentication'], groups: [] }) as KubeObject & { data: Record<string, string> };
  for (const [k, v] of Object.entries(data)) secret.data[k] = Buffer.from(v).toString('base64');
  const authn = buildBootstrapTokenAuthenticator({ getSecret: async () => secret, now: () => NOW });
  try {
    return (await authn(formatToken(token))!).groups;
  } catch {
    return 'refused';
  }
}

describe('bootstrap token checks as upstream', () => {
  it('an expiration that is not RFC 3339 counts as expired; RFC 3339 ones are compared', async () => {
    for (const bad of ['2099-01-01', 'Jan 1 2099', '2099-01-01 00:00:00Z', '2099-02-30T00:00:00Z', '2099-01-01t00:00:00z']) {
      expect(await authenticate({ [KEY_EXPIRATION]: bad }), bad).toBe('refused');
    }
    expect(await authenticate({ [KEY_EXPIRATION]: '2099-01-01T00:00:00Z' })).toEqual(['system:bootstrappers']);
    expect(await authenticate({ [KEY_EXPIRATION]: '2099-01-01T00:00:00.25+02:00' })).toEqual(['system:bootstrappers']);
    expect(await authenticate({ [KEY_EXPIRATION]: '2026-05-31T23:59:59Z' })).toBe('refused');
  });

  it('extra groups are taken as written and returned sorted after deduplication', async () => {
    expect(await authenticate({ [KEY_EXTRA_GROUPS]: 'system:bootstrappers:a, system:bootstrappers:b' })).toBe('refused');
    expect(await authenticate({ [KEY_EXTRA_GROUPS]: 'system:bootstrappers:z,system:bootstrappers:a,system:bootstrappers:z' }))
      .toEqual(['system:bootstrappers', 'system:bootstrappers:a', 'system:bootstrappers:z']);
  });

  it('parseRfc3339 keeps nanoseconds and offsets, refuses out-of-range fields', () => {
    expect(parseRfc3339('2024-01-02T04:04:05.000000001+01:00')).toBe(BigInt(Date.parse('2024-01-02T03:04:05Z')) * 1_000_000n + 1n);
    for (const bad of ['2024-13-01T00:00:00Z', '2024-01-01T24:00:00Z', '2024-01-01T00:00:00+24:00', '2023-02-29T00:00:00Z']) {
      expect(parseRfc3339(bad), bad).toBeUndefined();
    }
    expect(parseRfc3339('2024-02-29T00:00:00Z')).toBeDefined();
  });
});

describe('csrsigning checks as upstream', () => {
  it('kube-apiserver-client requires client auth; other usages are named', async () => {
    const req = parseCsrPem((await createCsr({ commonName: 'jane', organizations: [] })).csrPem);
    expect(signerProblem(KUBE_APISERVER_CLIENT_SIGNER, req, ['digital signature']))
      .toBe('missing required usage for client certificate: client auth');
    expect(signerProblem(KUBE_APISERVER_CLIENT_SIGNER, req, ['client auth', 'server auth']))
      .toBe('invalid usage for client certificate: server auth');
    expect(signerProblem(KUBE_APISERVER_CLIENT_SIGNER, req, ['client auth', 'key encipherment'])).toBeUndefined();
  });

  it('a kubelet client CSR with SANs is refused in upstream\'s words', async () => {
    const withDns = parseCsrPem((await createCsr({ commonName: 'system:node:a', organizations: ['system:nodes'],
      dnsNames: ['a'] })).csrPem);
    expect(signerProblem(KUBELET_CLIENT_SIGNER, withDns, ['client auth', 'digital signature']))
      .toBe('DNS subjectAltNames are not allowed');
    const withIp = parseCsrPem((await createCsr({ commonName: 'system:node:a', organizations: ['system:nodes'],
      ipAddresses: ['10.0.0.1'] })).csrPem);
    expect(signerProblem(KUBELET_CLIENT_SIGNER, withIp, ['client auth', 'digital signature']))
      .toBe('IP subjectAltNames are not allowed');
  });
});

describe('csrapproving: kdp\'s lab rule for kubelet-serving', () => {
  const node = (name: string, ...ips: string[]): Node => ({ metadata: { name }, status: {
    addresses: [{ type: 'Hostname', address: name }, ...ips.map((address) => ({ type: 'InternalIP', address }))] } } as Node);
  const serving = async (dnsNames: string[], ipAddresses: string[]) => {
    const { csrPem } = await createCsr({ commonName: 'system:node:b', organizations: ['system:nodes'], dnsNames, ipAddresses });
    const csr = { metadata: { name: 'csr-x' }, spec: { request: Buffer.from(csrPem).toString('base64'),
      signerName: 'kubernetes.io/kubelet-serving', usages: ['digital signature', 'server auth'],
      username: 'system:node:b', groups: ['system:nodes', 'system:authenticated'] } } as CertificateSigningRequest;
    return { csr, req: parseCsrPem(csrPem) };
  };

  it('approves a node\'s own addresses, not one another Node has too (published in its own status)', async () => {
    const a = node('a', '10.0.0.1');
    const own = await serving(['b'], ['10.0.0.2']);
    expect(servingApprovable(own.csr, own.req, node('b', '10.0.0.2'), [a, node('b', '10.0.0.2')])).toBe(true);
    // b publishes a's address beside its own: no certificate for it.
    const b = node('b', '10.0.0.2', '10.0.0.1');
    const stolen = await serving(['b'], ['10.0.0.2', '10.0.0.1']);
    expect(servingApprovable(stolen.csr, stolen.req, b, [a, b])).toBe(false);
    const named = await serving(['b', 'a'], ['10.0.0.2']);
    const b2 = { ...node('b', '10.0.0.2'), status: { addresses: [...node('b', '10.0.0.2').status!.addresses!,
      { type: 'InternalDNS', address: 'a' }] } } as Node;
    expect(servingApprovable(named.csr, named.req, b2, [{ metadata: { name: 'a' } } as Node, b2])).toBe(false);
  });
});

describe('csrsigning validity as upstream\'s authority boundaries()', () => {
  it('backdates 5 min; 8 h or more ends 5 min early, shorter ends at now + duration; capped at the CA', async () => {
    const ca = await issueCa('test-ca', 30);
    const req = parseCsrPem((await createCsr({ commonName: 'jane', organizations: [] })).csrPem);
    const window = async (expirationSeconds?: number) => {
      const c = new X509Certificate(await signCsr(ca, req, { usages: ['client auth'], expirationSeconds, now: NOW }));
      return [Date.parse(c.validFrom) - NOW, Date.parse(c.validTo) - NOW];
    };
    expect(await window(3600)).toEqual([-300_000, 3_600_000]);
    expect(await window(60)).toEqual([-300_000, 600_000]);
    expect(await window(86_400)).toEqual([-300_000, 86_400_000 - 300_000]);
    const caEnd = Date.parse(new X509Certificate(ca.certPem).validTo);
    expect((await window())[1]).toBe(caEnd - NOW);
    await expect(signCsr(ca, req, { usages: ['client auth'], now: caEnd + 1000 }))
      .rejects.toThrow('refusing to sign a certificate that expired in the past');
  });
});
