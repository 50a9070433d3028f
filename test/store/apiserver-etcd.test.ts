// The API server on a real etcd: objects survive an API server restart without a store of its
// own, and two API servers on one etcd see one history (a create on one reaches a watch on the
// other).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_USER } from '../../src/apiserver/app.js';
import { startApiServer, type RunningApiServer } from '../../src/apiserver/start.js';
import { buildInProcessClient } from '../../src/client/in-process.js';
import type { KubeObject } from '../../src/client/types.js';
import { etcdMissing, startEtcd, type TestEtcd } from '../helpers/etcd.js';

const CM = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' } as const;

describe.skipIf(etcdMissing())('API servers on etcd (--etcd-servers)', () => {
  let etcd: TestEtcd;
  const servers: RunningApiServer[] = [];
  const start = async () => {
    const s = await startApiServer({ dataDir: mkdtempSync(join(tmpdir(), 'kdp-etcd-api-')), port: 0,
      etcd: { endpoints: [etcd.endpoint] } });
    servers.push(s);
    return s;
  };
  const clientOf = (s: RunningApiServer) => buildInProcessClient(s.server.service, ADMIN_USER);
  beforeAll(async () => { etcd = await startEtcd(); }, 30_000);
  afterAll(async () => {
    for (const s of servers) await s.close().catch(() => undefined);
    await etcd?.stop();
  });

  it('objects live in etcd under /registry, with etcd revisions as resourceVersions', async () => {
    const a = await start();
    const made = await clientOf(a).create<KubeObject>(CM, { apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: 'one' }, data: { x: '1' } } as KubeObject);
    const r = await fetch(`${etcd.endpoint}/v3/kv/range`, { method: 'POST',
      body: JSON.stringify({ key: Buffer.from('/registry/configmaps/default/one').toString('base64') }) });
    const body = await r.json() as { kvs?: Array<{ mod_revision: string }> };
    expect(body.kvs?.[0]?.mod_revision).toBe(made.metadata.resourceVersion);
    await a.close();
    servers.pop();
    // A new API server (another data dir, nothing local) finds it.
    const b = await start();
    expect((await clientOf(b).get<KubeObject & { data: Record<string, string> }>(CM, 'one')).data).toEqual({ x: '1' });
  });

  it('a create on one API server reaches a watch on another', async () => {
    const [b, c] = [servers[0]!, await start()];
    const seen: string[] = [];
    const w = clientOf(c).watch<KubeObject>(CM, { resourceVersion: String(c.store.currentRevision()) },
      { onEvent: (ev) => { if (ev.type === 'ADDED') seen.push(ev.object.metadata.name!); } });
    await new Promise((r) => setTimeout(r, 100)); // the watch is open
    const t0 = Date.now();
    await clientOf(b).create(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'two' } } as KubeObject);
    while (!seen.includes('two') && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 2));
    expect(seen).toContain('two');
    w.stop();
  });
});
