// The HTTP client against the real API server (PKI, RBAC, admission; see http-test-server.ts)
// over TLS with the admin token, a client certificate, and a non-admin token.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePki } from '../../src/apiserver/pki/index.js';
import { buildHttpClient, type HttpClient } from '../../src/client/http-client.js';
import type { WatchEvent } from '../../src/client/types.js';
import { isKdpError, type KdpError } from '../../src/errors.js';
import { startSecureApi, type SecureApi } from './http-test-server.js';

let dir: string;
let api: SecureApi;
let admin: HttpClient;
const clients: HttpClient[] = [];

const CM = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };
const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' };

function client(extra: Partial<Parameters<typeof buildHttpClient>[0]> = {}): HttpClient {
  const c = buildHttpClient({ server: api.url, caPem: api.pki.caCertPem, ...extra });
  clients.push(c);
  return c;
}

async function rejection(p: Promise<unknown>): Promise<KdpError> {
  return p.then(() => { throw new Error('expected a rejection'); }, (e: KdpError) => e);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kdp-httpc-'));
  api = await startSecureApi(dir, ['jane-token,jane,jane,"dev"']);
  admin = client({ token: api.pki.adminToken });
});

afterAll(async () => {
  for (const c of clients) c.close();
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('HTTP client against the API server', () => {
  it('creates, gets, lists, patches, updates and deletes a ConfigMap', async () => {
    const made = await admin.create(CM, { apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: 'c1', labels: { app: 'x' } }, data: { a: '1' } });
    expect(made.metadata.uid).toBeTruthy();
    expect((await admin.get(CM, 'c1')).data).toEqual({ a: '1' });
    const list = await admin.list(CM, { labelSelector: 'app=x' });
    expect(list.items.map((i) => i.metadata.name)).toEqual(['c1']);
    const patched = await admin.patch(CM, 'c1', 'merge', { data: { b: '2' } });
    expect(patched.data).toEqual({ a: '1', b: '2' });
    const updated = await admin.update(CM, { ...patched, data: { c: '3' } });
    expect(updated.data).toEqual({ c: '3' });
    await admin.delete(CM, 'c1');
    expect((await rejection(admin.get(CM, 'c1'))).code).toBe('KDP_NOT_FOUND');
  });

  it('maps Status errors to catalogue codes with message and details', async () => {
    await admin.create(CM, { metadata: { name: 'dup' } });
    const dup = await rejection(admin.create(CM, { metadata: { name: 'dup' } }));
    expect(dup.code).toBe('KDP_ALREADY_EXISTS');
    expect(dup.message).toBe('configmaps "dup" already exists');
    expect(dup.details).toMatchObject({ name: 'dup', kind: 'configmaps' });
    const bad = await rejection(admin.create(SVC, { metadata: { name: 'bad' },
      spec: { clusterIP: '10.200.0.1', ports: [{ port: 80 }] } }));
    expect(bad.code).toBe('KDP_INVALID');
    expect(bad.details.causes?.[0]?.field).toBe('spec.clusterIPs');
  });

  it('creates a Service and gets a ClusterIP from the admission allocator', async () => {
    const svc = await admin.create(SVC, { metadata: { name: 'web' },
      spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ port: 80 }] } });
    const spec = svc.spec as { clusterIP: string; ports: Array<{ nodePort: number }> };
    expect(spec.clusterIP).toMatch(/^10\.(9[6-9]|10[0-9]|11[01])\./);
    expect(spec.ports[0]!.nodePort).toBeGreaterThanOrEqual(30000);
  });

  it('dry-run create returns the object without storing it', async () => {
    const out = await admin.create(CM, { metadata: { name: 'dry' } }, { dryRun: true });
    expect(out.metadata.name).toBe('dry');
    expect((await rejection(admin.get(CM, 'dry'))).code).toBe('KDP_NOT_FOUND');
  });

  it('watches from a resourceVersion and receives ADDED, MODIFIED, DELETED in order',
    async () => {
      const rv = (await admin.list(CM)).metadata.resourceVersion;
      const events: WatchEvent[] = [];
      let closed = false;
      const seenDeleted = new Promise<void>((resolve) => {
        const h = admin.watch(CM, { resourceVersion: rv }, {
          onEvent(ev) {
            events.push(ev);
            if (ev.type === 'DELETED') { h.stop(); resolve(); }
          },
          onClose() { closed = true; },
        });
      });
      await admin.create(CM, { metadata: { name: 'w1' }, data: { v: '1' } });
      await admin.patch(CM, 'w1', 'merge', { data: { v: '2' } });
      await admin.delete(CM, 'w1');
      await seenDeleted;
      expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
        'ADDED w1', 'MODIFIED w1', 'DELETED w1']);
      expect(closed).toBe(false);
    });

  it('rejects a wrong token with KDP_UNAUTHORIZED', async () => {
    const e = await rejection(client({ token: 'wrong' }).list(CM));
    expect(e.code).toBe('KDP_UNAUTHORIZED');
  });

  it('authenticates with the admin client certificate', async () => {
    const c = client({ certPem: api.pki.adminCertPem, keyPem: api.pki.adminKeyPem });
    expect((await c.list(CM)).kind).toBe('ConfigMapList');
  });

  it('a user without RBAC bindings is forbidden with upstream\'s message', async () => {
    const e = await rejection(client({ token: 'jane-token' }).list(CM));
    expect(e.code).toBe('KDP_FORBIDDEN');
    expect(e.message).toBe('configmaps is forbidden: User "jane" cannot list resource ' +
      '"configmaps" in API group "" in the namespace "default"');
  });

  it('refuses a server whose certificate the given CA did not sign', async () => {
    const other = await mkdtemp(join(tmpdir(), 'kdp-httpc-'));
    try {
      const c = client({ caPem: (await ensurePki(other)).caCertPem, token: 'x' });
      const e = await rejection(c.list(CM));
      expect(isKdpError(e, 'KDP_UNAVAILABLE')).toBe(true);
      expect(e.message).toContain(api.url);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});
