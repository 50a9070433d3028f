// SelfSubjectReview (`kubectl auth whoami`) and SelfSubjectRulesReview (`kubectl auth can-i
// --list`) with the real kubectl 1.27 (JSON, v1beta1 whoami) and 1.33 (protobuf, v1).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlMissing, startKubectlHarness, type KubectlHarness } from './helpers/kubectl.js';

const MINORS = [27, 33];

describe.skipIf(MINORS.some(kubectlMissing))('kubectl auth whoami and can-i --list', () => {
  let h: KubectlHarness;
  let token: string;
  const k = (args: string[], minor = 33) => h.kubectl(args, { minor });

  beforeAll(async () => {
    h = await startKubectlHarness({});
    await k(['create', 'sa', 'robot']);
    await k(['create', 'ns', 'other']);
    await k(['create', 'role', 'pod-reader', '--verb=get,list', '--resource=pods']);
    await k(['create', 'rolebinding', 'robot-reads', '--role=pod-reader',
      '--serviceaccount=default:robot']);
    await k(['create', 'rolebinding', 'dangling', '--role=missing',
      '--serviceaccount=default:robot']);
    token = (await k(['create', 'token', 'robot'])).stdout.trim();
  });
  afterAll(async () => { await h?.close(); });

  for (const minor of MINORS) {
    it(`kubectl 1.${minor}: whoami with a service-account token names the ServiceAccount`,
      async () => {
        const r = await k(['--token', token, 'auth', 'whoami'], minor);
        expect(r.stderr).toBe('');
        const uid = (await k(['get', 'sa', 'robot', '-o', 'jsonpath={.metadata.uid}'])).stdout;
        expect(r.stdout).toMatch(/^ATTRIBUTE\s+VALUE\n/);
        expect(r.stdout).toMatch(/\nUsername\s+system:serviceaccount:default:robot\n/);
        expect(r.stdout).toMatch(new RegExp(`\\nUID\\s+${uid}\\n`));
        expect(r.stdout).toMatch(/\nGroups\s+\[system:serviceaccounts system:serviceaccounts:default system:authenticated\]\n/);
        expect(r.stdout).toMatch(/\nExtra: authentication\.kubernetes\.io\/credential-id\s+\[JTI=[0-9a-f-]{36}\]\n/);
      });

    it(`kubectl 1.${minor}: whoami as the admin and as an impersonated user`, async () => {
      expect((await k(['auth', 'whoami'], minor)).stdout).toMatch(/\nUsername\s+kubernetes-admin\n/);
      const r = await k(['auth', 'whoami', '--as', 'jane', '--as-group', 'dev', '-o', 'json'], minor);
      expect(JSON.parse(r.stdout).status.userInfo).toEqual({ username: 'jane',
        groups: ['dev', 'system:authenticated'] });
    });

    it(`kubectl 1.${minor}: can-i --list shows the rules bound in the namespace`, async () => {
      const r = await k(['--token', token, 'auth', 'can-i', '--list'], minor);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs\n/);
      expect(r.stdout).toMatch(/\npods\s+\[\]\s+\[\]\s+\[get list\]\n/);
      expect(r.stdout).toMatch(/\nselfsubjectreviews\.authentication\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]\n/);
      expect(r.stdout).toMatch(/\s\[\/healthz\]\s+\[\]\s+\[get\]\n/);
      const elsewhere = await k(['--token', token, 'auth', 'can-i', '--list', '-n', 'other'], minor);
      expect(elsewhere.stdout).not.toMatch(/\npods\s/);
      const admin = await k(['auth', 'can-i', '--list'], minor);
      expect(admin.stdout).toMatch(/\n\*\.\*\s+\[\]\s+\[\]\s+\[\*\]\n\s+\[\*\]\s+\[\]\s+\[\*\]\n/);
    });
  }

  it('the review reports a binding to a missing role as its evaluation error', async () => {
    const f = await h.file('ssrr.json', JSON.stringify({ apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview', spec: { namespace: 'default' } }));
    const r = await k(['--token', token, 'create', '--raw',
      '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', '-f', f]);
    const review = JSON.parse(r.stdout);
    expect(review).toMatchObject({ kind: 'SelfSubjectRulesReview',
      apiVersion: 'authorization.k8s.io/v1',
      status: { incomplete: false, evaluationError: 'role.rbac.authorization.k8s.io "missing" not found' } });
    expect(review.status.resourceRules).toContainEqual({ verbs: ['get', 'list'], apiGroups: [''],
      resources: ['pods'] });
    const none = await h.file('none.json', JSON.stringify({ apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview', spec: {} }));
    const bad = await k(['create', '--raw', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
      '-f', none]);
    expect(bad.stderr).toContain('no namespace on request');
  });
});
