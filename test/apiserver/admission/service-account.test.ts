// ServiceAccount admission as upstream's plugin: the default ServiceAccount, the 403 for a
// missing one (the `default` one waited for), the opt-outs, and the kube-api-access volume.

import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/api/types.js';
import { buildServiceAccountPlugin, SA_MOUNT_PATH } from '../../../src/apiserver/admission/service-account.js';
import type { AdmissionRequest } from '../../../src/apiserver/pipeline-types.js';
import type { KubeObject } from '../../../src/client/types.js';

function source(sas: Record<string, KubeObject>, appearAfter = Infinity) {
  let gets = 0;
  return {
    gets: () => gets,
    async get(resource: string, ns: string | undefined, name: string) {
      gets++;
      if (resource !== 'serviceaccounts') return undefined;
      if (gets > appearAfter && name === 'default') return { metadata: { name, namespace: ns } };
      return sas[`${ns}/${name}`];
    },
    async list() { return []; },
  };
}

const req = (pod: Pod): AdmissionRequest => ({ operation: 'CREATE', group: '', version: 'v1', resource: 'pods',
  namespace: 'shop', name: pod.metadata.name, object: pod as never, user: { name: 'u', groups: [] }, dryRun: false });
const pod = (spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): Pod => ({ apiVersion: 'v1', kind: 'Pod',
  metadata: { name: 'p', namespace: 'shop', ...meta },
  spec: { initContainers: [{ name: 'i', image: 'busybox' }], containers: [{ name: 'c', image: 'busybox' }], ...spec } } as Pod);
const SA = { 'shop/default': { metadata: { name: 'default', namespace: 'shop' } },
  'shop/quiet': { metadata: { name: 'quiet', namespace: 'shop' }, automountServiceAccountToken: false } as KubeObject };

describe('ServiceAccount admission', () => {
  it('sets default and adds the projected volume, mounted read-only in every container', async () => {
    const p = pod();
    await buildServiceAccountPlugin({ source: source(SA), random: () => 0 }).admit!(req(p));
    expect(p.spec!.serviceAccountName).toBe('default');
    expect(p.spec!.volumes).toEqual([{ name: 'kube-api-access-bbbbb', projected: { defaultMode: 420, sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ] } }]);
    for (const c of [...p.spec!.initContainers!, ...p.spec!.containers]) {
      expect(c.volumeMounts).toEqual([{ name: 'kube-api-access-bbbbb', readOnly: true, mountPath: SA_MOUNT_PATH }]);
    }
  });

  it('a missing ServiceAccount is a 403 naming it; the default one is waited for', async () => {
    const plugin = buildServiceAccountPlugin({ source: source(SA), retryMs: 1 });
    await expect(plugin.admit!(req(pod({ serviceAccountName: 'ghost' })))).rejects.toMatchObject({
      code: 'KDP_FORBIDDEN',
      message: 'pods "p" is forbidden: error looking up service account shop/ghost: serviceaccount "ghost" not found' });
    const late = source({}, 3);
    const p = pod();
    await buildServiceAccountPlugin({ source: late, retryMs: 1 }).admit!(req(p));
    expect(late.gets()).toBe(4);
    expect(p.spec!.volumes).toHaveLength(1);
    const never = source({});
    await expect(buildServiceAccountPlugin({ source: never, retryMs: 1 }).admit!(req(pod()))).rejects
      .toMatchObject({ code: 'KDP_FORBIDDEN' });
    expect(never.gets()).toBe(10);
  });

  it('opt-outs: the ServiceAccount\'s, the pod\'s (which wins), a mount already there, mirror pods', async () => {
    const plugin = buildServiceAccountPlugin({ source: source(SA), retryMs: 1 });
    const quiet = pod({ serviceAccountName: 'quiet' });
    await plugin.admit!(req(quiet));
    expect(quiet.spec!.volumes).toBeUndefined();
    const override = pod({ serviceAccountName: 'quiet', automountServiceAccountToken: true });
    await plugin.admit!(req(override));
    expect(override.spec!.volumes).toHaveLength(1);
    const podOff = pod({ automountServiceAccountToken: false });
    await plugin.admit!(req(podOff));
    expect(podOff.spec!.volumes).toBeUndefined();
    const own = pod({ containers: [{ name: 'c', image: 'x', volumeMounts: [{ name: 'mine', mountPath: SA_MOUNT_PATH }] }],
      volumes: [{ name: 'mine', emptyDir: {} }] });
    await plugin.admit!(req(own));
    expect(own.spec!.volumes).toEqual([{ name: 'mine', emptyDir: {} }]);
    const mirror = pod({}, { annotations: { 'kubernetes.io/config.mirror': 'x' } });
    await plugin.admit!(req(mirror));
    expect(mirror.spec!.serviceAccountName).toBeUndefined();
  });
});
