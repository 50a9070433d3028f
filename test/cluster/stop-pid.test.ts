// `kdp down` stops `kdp up` by its process, not by its pid file: a stopping kdp removes the file
// early, and the old check then reported success while kdp up lived on.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stopPid, writePidFile } from '../../src/cluster/daemon.js';
import { isAlive, recordProcess } from '../../src/host/process.js';

const dir = mkdtempSync(join(tmpdir(), 'kdp-stoppid-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('stopPid', () => {
  it('waits for the process itself when it removes its pid file on SIGTERM and lingers', async () => {
    const pidFile = join(dir, 'kdp.pid');
    // Removes the pid file on SIGTERM, then keeps running (as a slow shutdown does).
    const child = spawn(process.execPath, ['-e', `
      process.on('SIGTERM', () => { require('fs').rmSync(${JSON.stringify(pidFile)}, { force: true }); });
      setInterval(() => {}, 1000); console.log('up');`], { stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise((r) => child.stdout!.once('data', r));
    writePidFile(pidFile, child.pid!);
    const rec = recordProcess(child.pid!);
    const r = await stopPid(pidFile, 500);
    expect(r).toEqual({ stopped: true });
    expect(isAlive(rec)).toBe(false);
  });

  it('says nothing was running when the pid file is stale', async () => {
    const pidFile = join(dir, 'stale.pid');
    writePidFile(pidFile, 999_999);
    expect(await stopPid(pidFile)).toEqual({ stopped: false });
  });
});
