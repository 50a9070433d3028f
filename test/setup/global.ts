// Global setup of the test run: every test's temporary files go under one directory of this run
// (TMPDIR, which os.tmpdir() and mkdtemp read), removed at the end; and the run fails under
// CI=true when it leaves a kdp network namespace behind (elsewhere other runs may share the
// machine, so it only warns).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function kdpNetns(): Set<string> {
  try {
    const out = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return new Set(out.split('\n').map((l) => l.split(' ')[0]!).filter((n) => n.startsWith('kdp-')));
  } catch {
    return new Set();
  }
}

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'kdp-test-run-'));
  const before = kdpNetns();
  process.env.TMPDIR = dir;
  return () => {
    rmSync(dir, { recursive: true, force: true });
    const left = [...kdpNetns()].filter((n) => !before.has(n));
    if (left.length === 0) return;
    const msg = `the test run left ${left.length} kdp network namespace(s) behind: ${left.slice(0, 10).join(', ')}`;
    if (process.env.CI === 'true') throw new Error(msg);
    console.warn(`warning: ${msg} (a failure under CI=true)`);
  };
}
