// `kdp apiserver --store embedded|etcd`: the store is chosen as the issue words it, and
// contradictions are refused, naming the flags, before anything starts.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kdp } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'kdp-store-flag-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kdp apiserver --store', () => {
  it.each([
    [['--store', 'etcd'], /--store etcd needs --etcd-servers/],
    [['--store', 'embedded', '--etcd-servers', 'https://127.0.0.1:2379'], /--store embedded and --etcd-servers contradict/],
    [['--store', 'sqlite'], /--store: "sqlite" is not embedded or etcd/],
    [['--etcd-servers', 'http://127.0.0.1:2379', '--etcd-compaction-interval', '5 minutes'], /--etcd-compaction-interval: "5 minutes" is not a duration/],
  ])('%j is refused', async (flags, re) => {
    const r = await kdp('apiserver', '--data-dir', dir, '--port', '0', ...flags);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(re);
  });
});
