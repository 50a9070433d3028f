import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startApiServer } from '../../src/apiserver/start.js';
import { ADMIN_USER } from '../../src/apiserver/app.js';

const CM = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };

describe('restart with the same data directory', () => {
  const dirs: string[] = [];
  afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }); });

  it('keeps objects and resumes resourceVersions above the old ones', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kdp-restart-'));
    dirs.push(dir);
    const ctx = { user: ADMIN_USER };
    const a = await startApiServer({ dataDir: dir, port: 0, insecureHttp: true });
    const made = await a.server.service.create(ctx, CM, { metadata: { name: 'keep' },
      data: { x: '1' } }, {});
    const rv1 = Number(made.metadata.resourceVersion);
    await a.close();
    const b = await startApiServer({ dataDir: dir, port: 0, insecureHttp: true });
    try {
      const got = await b.server.service.get(ctx, { ...CM, name: 'keep' });
      expect(got.data).toEqual({ x: '1' });
      expect(Number(got.metadata.resourceVersion)).toBe(rv1);
      const next = await b.server.service.create(ctx, CM, { metadata: { name: 'new' } }, {});
      expect(Number(next.metadata.resourceVersion)).toBeGreaterThan(rv1);
      const res = await fetch(`${b.url}/api/v1/namespaces/default/configmaps`);
      const list = await res.json() as { items: Array<{ metadata: { name: string } }> };
      expect(list.items.map((i) => i.metadata.name)).toEqual(['keep', 'new']);
      const NS = { group: '', version: 'v1', resource: 'namespaces' };
      const ns = await b.server.service.list(ctx, NS, {});
      expect(ns.items.map((i) => i.metadata.name)).toEqual(
        ['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    } finally {
      await b.close();
    }
  });
});
