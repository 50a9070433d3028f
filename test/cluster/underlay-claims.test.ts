// Joining node processes claim underlay addresses under a lock: started at once, they never pick
// the same one; a node reuses its own claim; a released claim is free again.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claimUnderlayAddress } from '../../src/cluster/underlay-claims.js';

describe('underlay address claims of joining nodes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdp-claims-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const firstFree = (taken: ReadonlySet<string>) => async () => {
    // Slow, as a list of the Nodes through the API is: the others wait for the lock meanwhile.
    await new Promise((r) => setTimeout(r, 20));
    for (let i = 3; ; i++) if (!taken.has(`172.18.0.${i}`)) return { ip: `172.18.0.${i}` };
  };

  it('concurrent claims get distinct addresses; own claims are reused; released ones are free', async () => {
    const names = ['n2', 'n3', 'n4', 'n5'];
    const claims = await Promise.all(names.map((n) => claimUnderlayAddress(dir, n, (taken) => firstFree(taken)())));
    expect(claims.map((c) => c.choice.ip).sort()).toEqual(['172.18.0.3', '172.18.0.4', '172.18.0.5', '172.18.0.6']);
    const again = await claimUnderlayAddress(dir, 'n3', (taken) => firstFree(taken)());
    expect(again.choice.ip).toBe(claims[1]!.choice.ip);
    claims[0]!.release();
    const next = await claimUnderlayAddress(dir, 'n9', (taken) => firstFree(taken)());
    expect(next.choice.ip).toBe(claims[0]!.choice.ip);
  });
});
