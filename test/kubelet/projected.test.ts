// Volume files as the kubelet writes them: the kube-api-access projection (a bound token that
// authenticates as the pod's ServiceAccount, the cluster CA, the namespace), configMap and
// secret keys and items with modes, downward API fields, optional and missing sources.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { ADMIN_USER } from '../../src/apiserver/app.js';
import { buildInProcessClient } from '../../src/client/in-process.js';
import type { Client } from '../../src/client/types.js';
import { buildControllerManager, type ControllerManager } from '../../src/controllers/manager.js';
import { downwardField, volumeFiles, type IssuedToken } from '../../src/kubelet/projected.js';
import { kubectlMissing, startKubectlHarness, type KubectlHarness } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';

const core = (resource: string) => ({ group: '', version: 'v1', resource, namespace: 'default' });
const text = (files: { path: string; data: Buffer; mode: number }[] | undefined) =>
  Object.fromEntries((files ?? []).map((f) => [f.path, [f.data.toString(), f.mode.toString(8)]]));

describe('kubelet volume files', () => {
  let h: KubectlHarness;
  let manager: ControllerManager;
  let client: Client;
  let pod: Pod;

  beforeAll(async () => {
    h = await startKubectlHarness({ serviceAccountAdmission: true });
    client = buildInProcessClient(h.server.server.service, ADMIN_USER);
    manager = buildControllerManager({ client, options: {
      controllers: ['serviceaccount', 'root-ca-certificate-publisher'], rootCaPem: h.server.pki.caCertPem } });
    await manager.start();
    await waitFor(async () => client.get(core('configmaps'), 'kube-root-ca.crt').then(() => true, () => undefined),
      10_000, 'kube-root-ca.crt');
    await client.create(core('configmaps'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' },
      data: { Corefile: '.:53 {}', b: 'bee' }, binaryData: { bin: Buffer.from([0, 1]).toString('base64') } } as never);
    await client.create(core('secrets'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sec' },
      data: { pw: Buffer.from('hunter2').toString('base64') } } as never);
    pod = await client.create<Pod>(core('pods'), { apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'p', labels: { app: 'web', tier: 'a' } },
      spec: { containers: [{ name: 'c', image: 'busybox' }] } } as never);
  });
  afterAll(async () => {
    await manager?.stop();
    await h?.close();
  });

  it('kube-api-access: a token of the pod\'s ServiceAccount, the CA, the namespace', async () => {
    const issued: IssuedToken[] = [];
    const files = await volumeFiles({ client }, pod, pod.spec!.volumes![0] as never, (t) => issued.push(t));
    const t = text(files);
    expect(Object.keys(t)).toEqual(['token', 'ca.crt', 'namespace']);
    expect(t['ca.crt']).toEqual([h.server.pki.caCertPem, '644']);
    expect(t.namespace).toEqual(['default', '644']);
    expect(issued[0]!.expiresAt - Date.now()).toBeGreaterThan(3590_000);
    expect(issued[0]!.refreshAt).toBeLessThan(issued[0]!.expiresAt);
    if (!kubectlMissing(33)) {
      const who = await h.kubectl(['--token', t.token![0], 'auth', 'whoami', '-o', 'json'], { minor: 33 });
      const user = JSON.parse(who.stdout).status.userInfo;
      expect(user.username).toBe('system:serviceaccount:default:default');
      expect(user.extra['authentication.kubernetes.io/pod-name']).toEqual(['p']);
    }
  });

  it('configMap and secret: every key, or items with their modes; binaryData decoded', async () => {
    expect(text(await volumeFiles({ client }, pod, { name: 'v', configMap: { name: 'cfg' } }))).toEqual({
      Corefile: ['.:53 {}', '644'], b: ['bee', '644'], bin: ['\u0000\u0001', '644'] });
    expect(text(await volumeFiles({ client }, pod, { name: 'v', configMap: { name: 'cfg', defaultMode: 0o600,
      items: [{ key: 'Corefile', path: 'conf/Corefile' }, { key: 'b', path: 'b', mode: 0o400 }] } })))
      .toEqual({ 'conf/Corefile': ['.:53 {}', '600'], b: ['bee', '400'] });
    expect(text(await volumeFiles({ client }, pod, { name: 'v', secret: { secretName: 'sec' } })))
      .toEqual({ pw: ['hunter2', '644'] });
  });

  it('missing sources: optional ones are skipped, required ones name what is missing', async () => {
    expect(await volumeFiles({ client }, pod, { name: 'v', configMap: { name: 'nope', optional: true } })).toEqual([]);
    await expect(volumeFiles({ client }, pod, { name: 'cfgvol', configMap: { name: 'nope' } })).rejects
      .toThrow('MountVolume.SetUp failed for volume "cfgvol" : configmap "nope" not found');
    await expect(volumeFiles({ client }, pod, { name: 'v', configMap: { name: 'cfg', items: [{ key: 'zz', path: 'z' }] } }))
      .rejects.toThrow('key "zz" not found in configmap default/cfg');
    await expect(volumeFiles({ client }, pod, { name: 'v', configMap: { name: 'cfg', items: [{ key: 'b', path: '../x' }] } }))
      .rejects.toThrow('must be relative');
  });

  it('downward API fields, maps formatted key="value" sorted; other kinds are not file volumes', async () => {
    expect(downwardField(pod, 'metadata.labels')).toBe('app="web"\ntier="a"');
    expect(downwardField(pod, "metadata.labels['tier']")).toBe('a');
    expect(text(await volumeFiles({ client }, pod, { name: 'v', downwardAPI: { items: [
      { path: 'name', fieldRef: { fieldPath: 'metadata.name' } }, { path: 'uid', fieldRef: { fieldPath: 'metadata.uid' } }] } })))
      .toEqual({ name: ['p', '644'], uid: [pod.metadata.uid, '644'] });
    expect(await volumeFiles({ client }, pod, { name: 'v', emptyDir: {} })).toBeUndefined();
  });
});
