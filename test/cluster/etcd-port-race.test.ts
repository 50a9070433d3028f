// A fresh local etcd cluster whose picked port is taken before etcd binds it (another process got
// there first) starts again on other ports instead of waiting 30 s and failing.

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEtcdLayout, startLocalEtcd } from '../../src/cluster/etcd-cluster.js';
import { freePort } from '../../src/util/free-port.js';
import { etcdMissing } from '../helpers/etcd.js';

describe.skipIf(etcdMissing())('local etcd start when a picked port is taken', () => {
  it('starts again on new ports and says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-etcd-race-'));
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', () => r()));
    const taken = (squatter.address() as { port: number }).port;
    let first = true;
    const pickPort = async () => {
      if (first) { first = false; return taken; } // handed out, then bound by someone else
      return freePort();
    };
    const lines: string[] = [];
    try {
      const etcd = await startLocalEtcd(dir, 1, (l) => lines.push(l), { pickPort });
      try {
        const layout = readEtcdLayout(dir)!;
        expect(layout.members[0]!.clientPort).not.toBe(taken);
        expect(layout.members[0]!.peerPort).not.toBe(taken);
        expect(lines.some((l) => /port was taken/.test(l))).toBe(true);
        expect(etcd.endpoints).toHaveLength(1);
      } finally {
        await etcd.stop();
      }
    } finally {
      squatter.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
