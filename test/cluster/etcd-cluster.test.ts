// kdp's local etcd cluster (kdp up --etcd 3): TLS members from the machine's etcd, the API server
// on it, writes through one member's crash, a watcher through the leader's, a clear error without
// quorum, recovery when a member returns, and `kdp etcd status`.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_USER } from '../../src/apiserver/app.js';
import { startApiServer, type RunningApiServer } from '../../src/apiserver/start.js';
import { startLocalEtcd, type LocalEtcd } from '../../src/cluster/etcd-cluster.js';
import { buildInProcessClient } from '../../src/client/in-process.js';
import { buildInformer } from '../../src/client/informer.js';
import type { Client, KubeObject } from '../../src/client/types.js';
import { kdp } from '../helpers/cli.js';
import { etcdMissing } from '../helpers/etcd.js';

const CM = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' } as const;

describe.skipIf(etcdMissing())('a local 3-member etcd cluster under the API server', () => {
  const root = mkdtempSync(join(tmpdir(), 'kdp-etcd3-'));
  let etcd: LocalEtcd;
  let api: RunningApiServer;
  let client: Client;
  let n = 0;
  const write = () => client.create(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${n++}` } } as KubeObject);
  const status = async () => JSON.parse((await kdp('etcd', 'status', '--data-dir', root, '-o', 'json')).out);

  beforeAll(async () => {
    etcd = await startLocalEtcd(root, 3, () => {});
    api = await startApiServer({ dataDir: root, port: 0, etcd: { endpoints: [...etcd.endpoints], tls: etcd.tls, timeoutMs: 3000 } });
    client = buildInProcessClient(api.server.service, ADMIN_USER);
  }, 60_000);
  afterAll(async () => {
    await api?.close().catch(() => undefined);
    await etcd?.stop();
  }, 30_000);

  it('serves over TLS; status names a leader and the quorum', async () => {
    for (let i = 0; i < 20; i++) await write();
    const s = await status();
    expect(s).toMatchObject({ size: 3, quorum: 2, healthy: 3, writable: true });
    expect(s.members.filter((m: { leader: boolean }) => m.leader)).toHaveLength(1);
  });

  it('writes go on while one member is down (kill -9), and it catches up when restarted', async () => {
    const leader = (await status()).members.find((m: { leader: boolean }) => m.leader).member as string;
    expect((await kdp('etcd', 'stop', '--kill', '--data-dir', root, leader)).code).toBe(0);
    for (let i = 0; i < 20; i++) await write();
    expect(await status()).toMatchObject({ healthy: 2, writable: true });
    expect((await kdp('etcd', 'start', '--data-dir', root, leader)).code).toBe(0);
    const deadline = Date.now() + 20_000;
    while ((await status()).healthy < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect((await status()).healthy).toBe(3);
    expect((await client.list(CM)).items.length).toBe(n);
  }, 60_000);

  it('a watcher started before the leader dies sees every write after it, in order, none lost', async () => {
    const seen: string[] = [];
    const informer = buildInformer<KubeObject>(client, CM);
    informer.addEventHandler({ onAdd: (o) => { seen.push(o.metadata.name!); } });
    informer.start();
    await informer.waitForSync();
    seen.length = 0;
    const leader = (await status()).members.find((m: { leader: boolean }) => m.leader).member as string;
    const first = n;
    for (let i = 0; i < 10; i++) await write();
    expect((await kdp('etcd', 'stop', '--kill', '--data-dir', root, leader)).code).toBe(0);
    for (let i = 0; i < 30; i++) await write();
    const want = Array.from({ length: n - first }, (_, i) => `cm-${first + i}`);
    const deadline = Date.now() + 20_000;
    while (seen.length < want.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    informer.stop();
    expect(seen).toEqual(want);
    expect((await kdp('etcd', 'start', '--data-dir', root, leader)).code).toBe(0);
    const back = Date.now() + 20_000;
    while ((await status()).healthy < 3 && Date.now() < back) await new Promise((r) => setTimeout(r, 200));
  }, 60_000);

  it('without quorum a write fails with a clear Status, and recovers when a member returns', async () => {
    await kdp('etcd', 'stop', '--kill', '--data-dir', root, 'etcd-1');
    await kdp('etcd', 'stop', '--kill', '--data-dir', root, 'etcd-2');
    const t0 = Date.now();
    await expect(write()).rejects.toMatchObject({ code: expect.stringMatching(/^KDP_(UNAVAILABLE|TIMEOUT)$/) });
    expect(Date.now() - t0).toBeLessThan(15_000);
    n--;
    expect((await kdp('etcd', 'status', '--data-dir', root)).out).toContain('no writes until a member returns');
    await kdp('etcd', 'start', '--data-dir', root, 'etcd-1');
    const deadline = Date.now() + 30_000;
    for (;;) {
      try { await write(); break; } catch (e) {
        n--;
        if (Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 300));
      }
    }
    await kdp('etcd', 'start', '--data-dir', root, 'etcd-2');
  }, 90_000);

  it('snapshot save of the running cluster and restore into a new data dir keep every object', async () => {
    const have = (await client.list(CM)).items.length;
    for (let i = 0; have + i < 1000; i++) await write();
    const names = (await client.list(CM)).items.map((x) => x.metadata.name).sort();
    expect(names).toHaveLength(1000);
    const file = join(root, 'backup.db');
    const save = await kdp('etcd', 'snapshot', 'save', '--data-dir', root, file);
    expect(save.code).toBe(0);
    const fresh = mkdtempSync(join(tmpdir(), 'kdp-etcd-restored-'));
    const restore = await kdp('etcd', 'snapshot', 'restore', '--data-dir', fresh, '--etcd', '3', file);
    expect(restore.out).toContain(`kdp up --etcd 3 --data-dir ${fresh}`);
    const etcd2 = await startLocalEtcd(fresh, 3, () => {});
    const api2 = await startApiServer({ dataDir: fresh, port: 0, etcd: { endpoints: [...etcd2.endpoints], tls: etcd2.tls } });
    try {
      const items = (await buildInProcessClient(api2.server.service, ADMIN_USER).list(CM)).items;
      expect(items.map((x) => x.metadata.name).sort()).toEqual(names);
    } finally {
      await api2.close();
      await etcd2.stop();
    }
    expect((await kdp('etcd', 'snapshot', 'restore', '--data-dir', fresh, file)).err).toContain('already holds an etcd cluster');
  }, 120_000);
});
