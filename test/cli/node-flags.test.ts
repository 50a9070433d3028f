import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { KDP_NODE_FLAGS } from '../../src/cli/node-flags.js';
import { spawnDetached } from '../../src/cluster/daemon.js';

const BIN = fileURLToPath(new URL('../../bin/kdp.js', import.meta.url));

describe('the node flags kdp runs with', () => {
  it('are the ones on bin/kdp.js\'s #! line, which runs as a program', () => {
    const first = readFileSync(BIN, 'utf8').split('\n')[0]!;
    const m = /^#!\/usr\/bin\/env -S node(?<flags>( --[a-z0-9-=]+)*)$/.exec(first);
    expect(m, first).not.toBeNull();
    expect(m!.groups!.flags!.trim().split(' ')).toEqual([...KDP_NODE_FLAGS]);
    expect(statSync(BIN).mode & 0o111).not.toBe(0);
    expect(execFileSync(BIN, ['--help'], { encoding: 'utf8' })).toMatch(/kdp/);
    // `npm run kdp` runs the file as a program too, not through a bare `node`.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(pkg.scripts.kdp).toBe('bin/kdp.js');
  });

  it('are passed to a kdp started in the background', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-flags-'));
    try {
      const script = join(dir, 'show.cjs');
      writeFileSync(script, 'console.log(JSON.stringify(process.execArgv));\n');
      const log = join(dir, 'log');
      spawnDetached(script, [], log, KDP_NODE_FLAGS);
      let text = '';
      for (let i = 0; i < 100 && !text.includes(']'); i++) {
        await sleep(50);
        text = readFileSync(log, 'utf8');
      }
      expect(JSON.parse(text)).toEqual([...KDP_NODE_FLAGS]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
