// Global setup of the test run: every test's temporary files go under one directory of this run
// (TMPDIR, which os.tmpdir() and mkdtemp read), removed at the end; and the run fails under
// CI=true when it leaves a kdp network namespace behind (elsewhere other runs may share the
// machine, so it only warns).

import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

/** One line for the kernel tests skipped in this run, with why (root, a missing program). */
function summariseSkips(path: string): void {
  let text: string;
  try { text = readFileSync(path, 'utf8'); } catch { return; }
  const files = new Map<string, string>();
  for (const line of text.split('\n').filter(Boolean)) {
    const [file, why] = line.split('\t');
    files.set(file!, why!);
  }
  const byWhy = new Map<string, number>();
  for (const why of files.values()) byWhy.set(why, (byWhy.get(why) ?? 0) + 1);
  console.log(`kernel tests skipped in ${files.size} file(s): ` +
    [...byWhy].map(([why, n]) => `${why} (${n})`).join('; ') + ' — CI=true makes them failures');
}

export default function setup(): () => void {
  // Each vitest project runs the global setup again in the same process: the first one owns the run.
  if (process.env.KDP_TEST_RUN_DIR) return () => {};
  const dir = mkdtempSync(join(tmpdir(), 'kdp-test-run-'));
  process.env.KDP_TEST_RUN_DIR = dir;
  // A temp dir like /tmp itself: tests run programs as other users (sticky, world-writable).
  chmodSync(dir, 0o1777);
  const before = kdpNetns();
  process.env.TMPDIR = dir;
  return () => {
    summariseSkips(join(dir, 'kdp-skips.log'));
    rmSync(dir, { recursive: true, force: true });
    const left = [...kdpNetns()].filter((n) => !before.has(n));
    if (left.length === 0) return;
    const msg = `the test run left ${left.length} kdp network namespace(s) behind: ${left.slice(0, 10).join(', ')}`;
    if (process.env.CI === 'true') throw new Error(msg);
    console.warn(`warning: ${msg} (a failure under CI=true)`);
  };
}
