// A Prometheus a dead kdp left running is stopped at the next start only when its pid file
// names a process whose command line has this data dir's --config.file; anything else is left.

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stopLeftover } from '../../src/metrics/prometheus-run.js';

describe('a leftover Prometheus', () => {
  it('is stopped when its command line names our config, and only then', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-promleft-'));
    const config = join(dir, 'prometheus.yml');
    const pidFile = join(dir, 'prometheus.pid');
    const ours = spawn('sh', ['-c', 'sleep 60', 'prometheus', `--config.file=${config}`], { stdio: 'ignore' });
    const other = spawn('sh', ['-c', 'sleep 60', 'prometheus', '--config.file=/elsewhere.yml'], { stdio: 'ignore' });
    try {
      await new Promise((r) => setTimeout(r, 100));
      writeFileSync(pidFile, `${other.pid}\n`);
      expect(stopLeftover(pidFile, config)).toBe(false);
      expect(other.exitCode).toBeNull();
      writeFileSync(pidFile, `${ours.pid}\n`);
      const exited = new Promise((r) => ours.once('exit', r));
      expect(stopLeftover(pidFile, config)).toBe(true);
      await exited;
      expect(stopLeftover(pidFile, config)).toBe(false);
    } finally {
      ours.kill();
      other.kill();
    }
  });
});
