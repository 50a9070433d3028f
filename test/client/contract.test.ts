// One Client contract, two clients: the in-process client (components inside `kdp up`) and the
// HTTP client (separate `kdp node`, `kdp controller-manager` processes) against the same API
// server must answer every call alike — objects, selectors, optimistic concurrency, patches,
// errors with their codes and causes, and watches from a resourceVersion.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_USER } from '../../src/apiserver/app.js';
import { buildHttpClient } from '../../src/client/http-client.js';
import { buildInProcessClient } from '../../src/client/in-process.js';
import type { Client, KubeObject, WatchEvent } from '../../src/client/types.js';
import { startKubectlHarness, type KubectlHarness } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';

const CM = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' } as const;
type ConfigMap = KubeObject & { data?: Record<string, string> };

let h: KubectlHarness;
beforeAll(async () => { h = await startKubectlHarness(); });
afterAll(async () => { await h?.close(); });

const CLIENTS: Array<[string, () => Client]> = [
  ['in-process', () => buildInProcessClient(h.server.server.service, ADMIN_USER)],
  ['HTTP', () => buildHttpClient({ server: h.server.url, caPem: h.server.pki.caCertPem, token: h.server.pki.adminToken })],
];

describe.each(CLIENTS)('the %s client', (kind, make) => {
  const p = kind === 'HTTP' ? 'h' : 'i';
  const cm = (name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}) =>
    ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${p}-${name}`, labels }, data }) as ConfigMap;

  it('create, get, list by label, and errors with their codes', async () => {
    const c = make();
    const made = await c.create<ConfigMap>(CM, cm('a', { tier: 'x' }, { k: 'v' }));
    expect(made.metadata).toMatchObject({ name: `${p}-a`, namespace: 'default' });
    expect(made.metadata.resourceVersion).toMatch(/^\d+$/);
    expect((await c.get<ConfigMap>(CM, `${p}-a`)).data).toEqual({ k: 'v' });
    await c.create(CM, cm('b', { tier: 'y' }));
    const names = (await c.list(CM, { labelSelector: 'tier=x' })).items.map((o) => o.metadata.name);
    expect(names).toContain(`${p}-a`);
    expect(names).not.toContain(`${p}-b`);
    await expect(c.get(CM, `${p}-nope`)).rejects.toMatchObject({ code: 'KDP_NOT_FOUND' });
    await expect(c.create(CM, cm('a'))).rejects.toMatchObject({ code: 'KDP_ALREADY_EXISTS' });
    const bad = await c.create(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name' } } as KubeObject)
      .catch((e) => e);
    expect(bad.code).toBe('KDP_INVALID');
    expect(bad.details.causes[0]).toMatchObject({ field: 'metadata.name', reason: 'FieldValueInvalid' });
  });

  it('update with a stale resourceVersion is a conflict; merge patch and delete', async () => {
    const c = make();
    const a = await c.get<ConfigMap>(CM, `${p}-a`);
    const fresh = await c.update<ConfigMap>(CM, { ...a, data: { k: 'w' } });
    expect(Number(fresh.metadata.resourceVersion)).toBeGreaterThan(Number(a.metadata.resourceVersion));
    await expect(c.update(CM, { ...a, data: { k: 'stale' } })).rejects.toMatchObject({ code: 'KDP_CONFLICT' });
    const patched = await c.patch<ConfigMap>(CM, `${p}-a`, 'merge', { data: { extra: '1' } });
    expect(patched.data).toEqual({ k: 'w', extra: '1' });
    await c.delete(CM, `${p}-b`);
    await expect(c.get(CM, `${p}-b`)).rejects.toMatchObject({ code: 'KDP_NOT_FOUND' });
  });

  it('a watch from a resourceVersion sees ADDED, MODIFIED, DELETED in order', async () => {
    const c = make();
    const rv = (await c.list(CM)).metadata.resourceVersion;
    const events: string[] = [];
    const w = c.watch<ConfigMap>(CM, { resourceVersion: rv }, {
      onEvent: (e: WatchEvent<ConfigMap>) => { if (e.object?.metadata?.name === `${p}-w`) events.push(e.type); },
      onClose: () => undefined,
    });
    try {
      await c.create(CM, cm('w'));
      await c.patch(CM, `${p}-w`, 'merge', { data: { n: '1' } });
      await c.delete(CM, `${p}-w`);
      await waitFor(async () => events.length >= 3 || undefined, 10_000, 'three events');
      expect(events).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    } finally {
      w.stop();
    }
  });
});
