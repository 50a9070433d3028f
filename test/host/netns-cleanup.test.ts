import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { ensureNetns, listNetns } from '../../src/host/netns.js';
import { applyNft, nftList } from '../../src/host/rules.js';
import { HostStateFile } from '../../src/host/state.js';
import { isAlive, recordProcess } from '../../src/host/process.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';

const run = canUseNetns(['ip', 'nft']);
const exec = buildHostExec();
const prefix = testNetnsName();

describe.runIf(run)('host cleanup (root)', () => {
  afterAll(async () => {
    await cleanupHost(exec, join(tmpdir(), 'none.json'), prefix);
  });

  it('a failed nft apply leaves the previous ruleset in place', async () => {
    const ns = `${prefix}-rules`;
    await ensureNetns(exec, ns);
    await applyNft(exec, ns, 'add table ip kdpt\nadd chain ip kdpt c\n');
    await expect(applyNft(exec, ns, 'add chain ip kdpt d\nadd rule ip kdpt d bogus\n')).rejects.toThrow(/nft -f/);
    const listed = await nftList(exec, ns);
    expect(listed).toContain('chain c');
    expect(listed).not.toContain('chain d');
  });

  it('removes recorded and prefix-matching namespaces and the processes inside them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-host-'));
    const stateFile = join(dir, 'host-state.json');
    const state = new HostStateFile(stateFile, prefix);
    const a = `${prefix}-a`;
    const b = `${prefix}-b`;
    await state.addNetns(a);
    await ensureNetns(exec, a);
    await ensureNetns(exec, b); // not recorded: found by the prefix sweep (crash case)
    const child = spawn('ip', ['netns', 'exec', b, 'sleep', '60'], { stdio: 'ignore', detached: true });
    await new Promise((r) => setTimeout(r, 300));
    const rec = recordProcess(child.pid!);

    const report = await cleanupHost(exec, stateFile, prefix, 500);
    const left = (await listNetns(exec)).filter((n) => n.startsWith(prefix));
    expect(left).toEqual([]);
    expect(report.netnsDeleted).toEqual(expect.arrayContaining([a, b]));
    await new Promise((r) => setTimeout(r, 100));
    expect(isAlive(rec)).toBe(false);
    // Idempotent: a second run finds nothing and does not fail.
    expect((await cleanupHost(exec, stateFile, prefix)).netnsDeleted).toEqual([]);
  });
});
