import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/client/types.js';
import { isKdpError } from '../../src/errors.js';
import { DESCRIPTION } from '../../src/controllers/rootcacertpublisher/controller.js';
import { ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';
const NS = ref('namespaces');
const exists = async (p: Promise<KubeObject>) => {
  try { return await p; } catch (e) { if (isKdpError(e, 'KDP_NOT_FOUND')) return undefined; throw e; }
};

describe('ServiceAccount controller and root CA publisher', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ timeScale: 0.01, scheduler: false,
      controllers: { controllers: ['serviceaccount', 'root-ca-certificate-publisher', 'namespace'],
        rootCaPem: CA } });
  });
  afterAll(async () => { await c?.close(); });

  it('every namespace gets a default ServiceAccount and kube-root-ca.crt', async () => {
    for (const name of ['lab', 'lab2']) {
      await c.client.create(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
    for (const ns of ['lab', 'lab2']) {
      const sa = await waitFor(() => exists(c.client.get(ref('serviceaccounts', ns), 'default')),
        10_000, `default SA in ${ns}`);
      expect(sa.metadata.uid).toBeTruthy();
      const cm = await waitFor(() => exists(c.client.get(ref('configmaps', ns), 'kube-root-ca.crt')),
        10_000, `kube-root-ca.crt in ${ns}`);
      expect((cm as KubeObject & { data: unknown }).data).toEqual({ 'ca.crt': CA });
      expect(cm.metadata.annotations).toEqual({ 'kubernetes.io/description': DESCRIPTION });
    }
  });

  it('a deleted default ServiceAccount comes back with a new uid', async () => {
    const SA = ref('serviceaccounts', 'lab');
    const before = await waitFor(() => exists(c.client.get(SA, 'default')));
    await c.client.delete(SA, 'default');
    const after = await waitFor(async () => {
      const s = await exists(c.client.get(SA, 'default'));
      return s && s.metadata.uid !== before.metadata.uid ? s : undefined;
    }, 10_000, 'default SA re-created');
    expect(after.metadata.name).toBe('default');
  });

  it('an edited or deleted kube-root-ca.crt is put back', async () => {
    const CM = ref('configmaps', 'lab');
    const cm = await waitFor(() => exists(c.client.get(CM, 'kube-root-ca.crt')));
    await c.client.update(CM, { ...cm, data: { 'ca.crt': 'tampered', extra: 'x' } });
    await waitFor(async () => {
      const now = await exists(c.client.get(CM, 'kube-root-ca.crt')) as
        (KubeObject & { data?: Record<string, string> }) | undefined;
      return now?.data?.['ca.crt'] === CA && now.data.extra === undefined;
    }, 10_000, 'ca.crt restored');
    await c.client.delete(CM, 'kube-root-ca.crt');
    await waitFor(() => exists(c.client.get(CM, 'kube-root-ca.crt')), 10_000, 'recreated');
  });

  it('a terminating namespace is emptied and left alone', async () => {
    await c.client.create(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tmp' } });
    await waitFor(() => exists(c.client.get(ref('configmaps', 'tmp'), 'kube-root-ca.crt')));
    await waitFor(() => exists(c.client.get(ref('serviceaccounts', 'tmp'), 'default')));
    await c.client.delete(NS, 'tmp');
    await waitFor(async () => (await exists(c.client.get(NS, 'tmp'))) === undefined, 20_000,
      'namespace gone');
  });
});
