// `kdp up` is ready only when every node is Ready and its kube-proxy's first apply succeeded in
// every family; a first apply that keeps failing ends the start with the applier's error.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Node } from '../../src/api/types.js';
import type { Client } from '../../src/client/types.js';
import { waitForReady } from '../../src/cluster/up.js';
import { RuleHistory, rulesDir } from '../../src/proxy/history.js';

const dir = mkdtempSync(join(tmpdir(), 'kdp-ready-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const readyNode = (name: string): Node => ({ metadata: { name },
  status: { conditions: [{ type: 'Ready', status: 'True' }] } } as Node);
const client = { list: async () => ({ items: [readyNode('n1')] }) } as unknown as Client;
const NODES = [{ name: 'n1', ip: '172.18.0.2' }];

describe('waiting for a cluster to be ready', () => {
  it('waits for the first good apply, not only for Ready', async () => {
    const data = join(dir, 'a');
    const history = new RuleHistory(rulesDir(data, 'n1'));
    let done = false;
    const p = waitForReady(client, NODES, ['IPv4'], data, () => undefined).then(() => { done = true; });
    await new Promise((r) => setTimeout(r, 200));
    expect(done).toBe(false);
    history.recordApply([{ family: 'IPv4', failed: false, failures: 0, since: 'now' }]);
    await p;
    expect(done).toBe(true);
  });

  it('fails with the applier\'s error when the first apply keeps failing', async () => {
    const data = join(dir, 'b');
    new RuleHistory(rulesDir(data, 'n1')).recordApply([{ family: 'IPv4', failed: true, failures: 3,
      since: 'then', lastError: { time: 'now', message: 'nft: command not found' } }]);
    await expect(waitForReady(client, NODES, ['IPv4'], data, () => undefined)).rejects
      .toThrow("node n1's kube-proxy could not apply its IPv4 rules (3 attempts): nft: command not found");
  });
});
