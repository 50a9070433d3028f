// The API server's etcd compactor (upstream's storage/etcd3/compact.go): one round per interval,
// the first only records a revision, each later one compacts to the revision recorded a round
// earlier; several API servers on one etcd compact once per interval between them (a CAS on
// compact_rev_key's version), and a real etcd's history is gone behind the compaction.

import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactRound, type CompactorOps } from '../../src/store/etcd-compactor.js';
import { buildEtcdStore } from '../../src/store/etcd-store.js';
import { etcdMissing, startEtcd, type TestEtcd } from '../helpers/etcd.js';
import { waitFor } from '../helpers/cluster.js';

/** Two API servers' views of one etcd: a shared compact_rev_key and revision counter. */
function sharedEtcd() {
  const key = { version: 0, value: 0 };
  let revision = 100;
  const compactions: number[] = [];
  const ops: CompactorOps = {
    async casCompactKey(version, rev) {
      revision += 10; // writes happened meanwhile
      if (key.version !== version) return { succeeded: false, version: key.version, revision };
      key.version++;
      key.value = rev;
      return { succeeded: true, version: key.version, revision };
    },
    async compact(rev) { compactions.push(rev); },
  };
  return { ops, key, compactions };
}

describe('compactRound', () => {
  it('records on the first round and compacts to the previous round\'s revision after', async () => {
    const { ops, compactions } = sharedEtcd();
    let s = await compactRound(ops, { version: 0, revision: 0 });
    expect(compactions).toEqual([]);
    expect(s).toEqual({ version: 1, revision: 110 });
    s = await compactRound(ops, s);
    expect(compactions).toEqual([110]);
    s = await compactRound(ops, s);
    expect(compactions).toEqual([110, 120]);
  });

  it('two servers compact once per interval between them', async () => {
    const { ops, key, compactions } = sharedEtcd();
    let a = { version: 0, revision: 0 };
    let b = { version: 0, revision: 0 };
    for (let round = 0; round < 4; round++) {
      a = await compactRound(ops, a);
      b = await compactRound(ops, b);
    }
    // Each interval exactly one of them wins the CAS: four intervals, four versions.
    expect(key.version).toBe(4);
    expect(compactions.length).toBeLessThanOrEqual(3);
    expect(compactions).toEqual([...compactions].sort((x, y) => x - y));
  });
});

describe.skipIf(etcdMissing())('the etcd store compacts a real etcd', () => {
  let etcd: TestEtcd;
  beforeAll(async () => { etcd = await startEtcd(); }, 30_000);
  afterAll(async () => { await etcd?.stop(); });

  it('history older than an interval is compacted away: a watch from it ends Gone', async () => {
    const store = await buildEtcdStore({ endpoints: [etcd.endpoint], compactionIntervalMs: 200 });
    const other = await buildEtcdStore({ endpoints: [etcd.endpoint], compactionIntervalMs: 200 });
    try {
      const first = await store.create('/registry/configmaps/default/a', '{"v":0}');
      for (let i = 1; i <= 5; i++) await store.update('/registry/configmaps/default/a', `{"v":${i}}`, store.currentRevision());
      // Reading the first revision back from etcd itself: refused once compacted.
      const client = new Etcd3({ hosts: etcd.endpoint });
      const gone = () => client.kv.range({ key: Buffer.from('/registry/configmaps/default/a'), revision: String(first.modRevision) })
        .then(() => false, (e: Error) => /compacted/.test(e.message));
      await waitFor(async () => (await gone()) || undefined, 15_000, 'the old revision compacted');
      const kv = await client.getAll().prefix('compact_rev_key').keys();
      client.close();
      expect(kv).toEqual(['compact_rev_key']);
    } finally {
      await store.close();
      await other.close();
    }
  }, 30_000);
});
