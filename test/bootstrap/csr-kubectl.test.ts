// certificates.k8s.io/v1 CertificateSigningRequest through the real kubectl: `kubectl get csr`
// (upstream's columns), `kubectl certificate approve|deny` (the approval subresource), the
// csrsigning controller issuing an approved request with the cluster CA, csrapproving
// auto-approving a kubelet client CSR of a bootstrap token user, and upstream's validation.

import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_USER } from '../../src/apiserver/app.js';
import { caOf } from '../../src/apiserver/pki/index.js';
import { createCsr } from '../../src/apiserver/pki/sign-csr.js';
import { buildHttpClient } from '../../src/client/http-client.js';
import { buildInProcessClient } from '../../src/client/in-process.js';
import type { Client, KubeObject } from '../../src/client/types.js';
import { createToken } from '../../src/bootstrap/token-store.js';
import { formatToken } from '../../src/bootstrap/token.js';
import { buildControllerManager, type ControllerManager } from '../../src/controllers/manager.js';
import { kubectlMissing, startKubectlHarness, type KubectlHarness } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';

const CSRS = { group: 'certificates.k8s.io', version: 'v1', resource: 'certificatesigningrequests' } as const;

async function csrObject(name: string, cn: string, o: string[], signerName: string, usages: string[]): Promise<KubeObject> {
  const { csrPem } = await createCsr({ commonName: cn, organizations: o });
  return { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name },
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName, usages } } as KubeObject;
}

describe.runIf(!kubectlMissing(32))('CertificateSigningRequests with kubectl 1.32', () => {
  let h: KubectlHarness;
  let admin: Client;
  let manager: ControllerManager;

  beforeAll(async () => {
    h = await startKubectlHarness();
    admin = buildInProcessClient(h.server.server.service, ADMIN_USER);
    manager = buildControllerManager({ client: admin, options: { clusterSigning: caOf(h.server.pki),
      controllers: ['csrapproving', 'csrsigning'] } });
    await manager.start();
  }, 60_000);
  afterAll(async () => {
    await manager?.stop();
    await h?.close();
  });

  it('kubectl certificate approve: Approved, then Issued by csrsigning with the cluster CA', async () => {
    const obj = await csrObject('jane', 'jane', ['devs'], 'kubernetes.io/kube-apiserver-client',
      ['digital signature', 'client auth']);
    const file = await h.file('jane.json', JSON.stringify(obj));
    expect((await h.kubectl(['create', '-f', file])).code).toBe(0);
    const pending = await h.kubectl(['get', 'csr', 'jane']);
    expect(pending.stdout).toMatch(/^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION/);
    expect(pending.stdout).toMatch(/jane\s+\S+\s+kubernetes\.io\/kube-apiserver-client\s+kubernetes-admin\s+<none>\s+Pending/);
    const approve = await h.kubectl(['certificate', 'approve', 'jane']);
    expect(approve.stderr).toBe('');
    expect(approve.stdout).toContain('certificatesigningrequest.certificates.k8s.io/jane approved');
    await waitFor(async () => /Approved,Issued/.test((await h.kubectl(['get', 'csr', 'jane'])).stdout), 20_000,
      'jane Approved,Issued');
    const got = await admin.get<KubeObject & { status: { certificate: string; conditions: Array<Record<string, string>> } }>(CSRS, 'jane');
    const cond = got.status.conditions[0]!;
    expect(cond).toMatchObject({ type: 'Approved', status: 'True', reason: 'KubectlApprove' });
    expect(cond.lastTransitionTime).toBeTruthy();
    const cert = new X509Certificate(Buffer.from(got.status.certificate, 'base64').toString());
    expect(cert.subject.split('\n')).toEqual(['CN=jane', 'O=devs']);
    expect(cert.verify(new X509Certificate(h.server.pki.caCertPem).publicKey)).toBe(true);
    // The requester is the authenticated user, never what the body claimed.
    expect((got as unknown as { spec: { username: string; groups: string[] } }).spec.username).toBe('kubernetes-admin');
  }, 60_000);

  it('kubectl certificate deny: Denied, never signed', async () => {
    const file = await h.file('bob.json', JSON.stringify(await csrObject('bob', 'bob', [],
      'kubernetes.io/kube-apiserver-client', ['client auth'])));
    expect((await h.kubectl(['create', '-f', file])).code).toBe(0);
    const deny = await h.kubectl(['certificate', 'deny', 'bob']);
    expect(deny.stdout).toContain('certificatesigningrequest.certificates.k8s.io/bob denied');
    expect((await h.kubectl(['get', 'csr', 'bob', '--no-headers'])).stdout).toMatch(/\sDenied\s*$/);
    // kubectl will not approve it; the server refuses it too (Approved and Denied exclude each other).
    const again = await h.kubectl(['certificate', 'approve', 'bob']);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('certificate signing request "bob" is already Denied');
    const cur = await admin.get<KubeObject & { status: { conditions: object[] } }>(CSRS, 'bob');
    await expect(admin.update(CSRS, { ...cur, status: { conditions: [...cur.status.conditions,
      { type: 'Approved', status: 'True' }] } } as KubeObject, { subresource: 'approval' }))
      .rejects.toThrow('Approved and Denied conditions are mutually exclusive');
  }, 60_000);

  it('a signer rule broken: Failed (SignerValidationFailure), no certificate', async () => {
    const file = await h.file('bad.json', JSON.stringify(await csrObject('bad', 'not-a-node', ['system:nodes'],
      'kubernetes.io/kube-apiserver-client-kubelet', ['digital signature', 'client auth'])));
    expect((await h.kubectl(['create', '-f', file])).code).toBe(0);
    expect((await h.kubectl(['certificate', 'approve', 'bad'])).code).toBe(0);
    await waitFor(async () => /Approved,Failed/.test((await h.kubectl(['get', 'csr', 'bad'])).stdout), 20_000, 'bad Failed');
    const got = await admin.get<KubeObject & { status: { certificate?: string; conditions: Array<Record<string, string>> } }>(CSRS, 'bad');
    expect(got.status.certificate).toBeUndefined();
    expect(got.status.conditions.find((c) => c.type === 'Failed')).toMatchObject({ reason: 'SignerValidationFailure',
      message: 'subject common name does not begin with system:node:' });
  }, 60_000);

  it('csrapproving auto-approves a bootstrap token\'s kubelet client CSR; the node gets its certificate', async () => {
    const token = await createToken(admin);
    const boot = buildHttpClient({ server: h.server.url, caPem: h.server.pki.caCertPem, token: formatToken(token) });
    try {
      await boot.create(CSRS, await csrObject('node-csr-n7', 'system:node:n7', ['system:nodes'],
        'kubernetes.io/kube-apiserver-client-kubelet', ['digital signature', 'client auth']));
      await waitFor(async () => /Approved,Issued/.test((await h.kubectl(['get', 'csr', 'node-csr-n7'])).stdout), 20_000,
        'node CSR issued');
      const row = (await h.kubectl(['get', 'csr', 'node-csr-n7', '--no-headers'])).stdout;
      expect(row).toContain(`system:bootstrap:${token.id}`);
      const got = await boot.get<KubeObject & { status: { conditions: Array<Record<string, string>> } }>(CSRS, 'node-csr-n7');
      expect(got.status.conditions[0]).toMatchObject({ type: 'Approved', reason: 'AutoApproved',
        message: 'Auto approving kubelet client certificate after SubjectAccessReview.' });
      // The same request from a user who may create CSRs but lacks the nodeclient permission
      // stays Pending (the SubjectAccessReview says no).
      await admin.create({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings' }, {
        apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'eve-csr' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node-bootstrapper' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'eve' }] } as KubeObject);
      const eve = buildInProcessClient(h.server.server.service, { name: 'eve', groups: ['system:authenticated'] });
      await eve.create(CSRS, await csrObject('node-csr-eve', 'system:node:n8', ['system:nodes'],
        'kubernetes.io/kube-apiserver-client-kubelet', ['digital signature', 'client auth']));
      await new Promise((r) => setTimeout(r, 1000));
      expect((await h.kubectl(['get', 'csr', 'node-csr-eve', '--no-headers'])).stdout).toMatch(/eve\s+<none>\s+Pending\s*$/);
    } finally {
      boot.close();
    }
  }, 60_000);

  it('CertificateSubjectRestriction: no system:masters through kube-apiserver-client', async () => {
    const file = await h.file('root.json', JSON.stringify(await csrObject('root', 'mallory', ['system:masters'],
      'kubernetes.io/kube-apiserver-client', ['client auth'])));
    const r = await h.kubectl(['create', '-f', file]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('certificatesigningrequests.certificates.k8s.io "root" is forbidden: use of ' +
      'kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed');
  }, 60_000);

  it('upstream validation: request, usages, signerName, expirationSeconds', async () => {
    const good = await csrObject('v', 'v', [], 'example.com/signer', ['client auth']);
    const spec = good.spec as Record<string, unknown>;
    const bad = { ...good, spec: { ...spec, request: Buffer.from('nope').toString('base64'), usages: [],
      signerName: 'no-slash', expirationSeconds: 60 } };
    const file = await h.file('v.json', JSON.stringify(bad));
    const r = await h.kubectl(['create', '-f', file]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('spec.request: Invalid value');
    expect(r.stderr).toContain('PEM block type must be CERTIFICATE REQUEST');
    expect(r.stderr).toContain('spec.usages: Required value');
    expect(r.stderr).toContain("spec.signerName: Invalid value: \"no-slash\": must be a fully qualified domain and path of the form 'example.com/signer-name'");
    expect(r.stderr).toContain('spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)');
    // The status subresource may not add approval conditions.
    await admin.create(CSRS, good);
    const cur = await admin.get<KubeObject>(CSRS, 'v');
    await expect(admin.update(CSRS, { ...cur, status: { conditions: [{ type: 'Approved', status: 'True' }] } } as KubeObject,
      { subresource: 'status' })).rejects.toThrow('updates may not add a condition of type "Approved"');
  }, 60_000);
});
