// The service-account story end to end with the real kubectl 1.33 over a kdp API server and
// the controller manager: every namespace has its `default` ServiceAccount and the
// `kube-root-ca.crt` ConfigMap (the cluster CA, which verifies the API server), and a token of
// `default` authenticates as system:serviceaccount:default:default.

import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_USER } from '../../src/apiserver/app.js';
import { buildInProcessClient } from '../../src/client/in-process.js';
import { buildControllerManager, type ControllerManager } from '../../src/controllers/manager.js';
import {
  kubectlMissing, startKubectlHarness, type KubectlHarness,
} from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';

const MINOR = 33;

describe.skipIf(kubectlMissing(MINOR))('service accounts with the controller manager', () => {
  let h: KubectlHarness;
  let manager: ControllerManager;
  const k = (args: string[]) => h.kubectl(args, { minor: MINOR });

  beforeAll(async () => {
    h = await startKubectlHarness({ serviceAccountAdmission: true });
    manager = buildControllerManager({
      client: buildInProcessClient(h.server.server.service, ADMIN_USER),
      options: { controllers: ['serviceaccount', 'root-ca-certificate-publisher'],
        rootCaPem: h.server.pki.caCertPem },
    });
    await manager.start();
  });
  afterAll(async () => {
    await manager?.stop();
    await h?.close();
  });

  it('kubectl get sa shows default in every namespace, new ones too', async () => {
    expect((await k(['create', 'ns', 'team-a'])).code).toBe(0);
    const out = await waitFor(async () => {
      const r = await k(['get', 'sa', '-A', '--no-headers', '-o',
        'custom-columns=NS:.metadata.namespace,NAME:.metadata.name']);
      const rows = r.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/).join('/'));
      return ['default/default', 'kube-system/default', 'kube-public/default',
        'kube-node-lease/default', 'team-a/default'].every((x) => rows.includes(x)) ? rows
        : undefined;
    }, 10_000, 'default ServiceAccounts');
    expect(out.length).toBeGreaterThanOrEqual(5);
  });

  it('kube-root-ca.crt holds the CA that signed the API server certificate', async () => {
    const pem = await waitFor(async () => {
      const r = await k(['get', 'cm', 'kube-root-ca.crt', '-n', 'team-a', '-o',
        'jsonpath={.data.ca\\.crt}']);
      return r.code === 0 && r.stdout ? r.stdout : undefined;
    }, 10_000, 'kube-root-ca.crt');
    const ca = new X509Certificate(pem);
    expect(new X509Certificate(h.server.pki.serverCertPem).verify(ca.publicKey)).toBe(true);
  });

  it('a token of default authenticates as system:serviceaccount:default:default', async () => {
    await waitFor(async () => (await k(['get', 'sa', 'default'])).code === 0, 10_000, 'sa');
    const token = (await k(['create', 'token', 'default'])).stdout.trim();
    const who = await k(['--token', token, 'auth', 'whoami']);
    expect(who.stdout).toMatch(/\nUsername\s+system:serviceaccount:default:default\n/);
    await k(['delete', 'sa', 'default']);
    // The controller re-creates it with a new uid: the old token is no longer good.
    await waitFor(async () => (await k(['get', 'sa', 'default'])).code === 0, 10_000,
      're-created');
    const after = await k(['--token', token, 'auth', 'whoami']);
    expect(after.stderr).toContain('Unauthorized');
  });

  it('kubectl run: the pod gets default and its kube-api-access volume; a missing account is a 403', async () => {
    await waitFor(async () => (await k(['get', 'sa', 'default', '-n', 'team-a'])).code === 0, 10_000, 'sa');
    const r = await k(['run', 'p', '-n', 'team-a', '--image=busybox', '--restart=Never', '--', 'sleep', '1']);
    expect(r.stderr).toBe('');
    const spec = JSON.parse((await k(['get', 'pod', 'p', '-n', 'team-a', '-o', 'json'])).stdout).spec;
    expect(spec.serviceAccountName).toBe('default');
    expect(spec.volumes[0].name).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(spec.volumes[0].projected.sources[0]).toEqual({ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } });
    expect(spec.containers[0].volumeMounts).toEqual([{ name: spec.volumes[0].name, readOnly: true,
      mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
    const bad = await k(['run', 'q', '-n', 'team-a', '--image=busybox', '--restart=Never',
      '--overrides={"spec":{"serviceAccountName":"ghost"}}']);
    expect(bad.stderr).toContain('pods "q" is forbidden: error looking up service account team-a/ghost: ' +
      'serviceaccount "ghost" not found');
  });
});
