// How long a `kdp` command takes from exec to exit, against a running virtual cluster (issue 22:
// ≤ 0.3 s wall for `kdp status`, `kdp rules`, `kdp trace`), side by side with the anchor of
// starting Node itself (`node -e 0`), which no command can beat. Median of 7 runs each, after one
// warm-up run that (re)builds the bundle cache. The cluster is `kdp up -d --virtual` on a free
// port in a temporary data dir, removed at the end.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { percentile, report } from './lib-bench.js';

const KDP = fileURLToPath(new URL('../bin/kdp.js', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'kdp-bench-startup-'));
const RUNS = 7;

function timeRun(file: string, args: readonly string[]): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(file, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

function median(file: string, args: readonly string[]): number {
  timeRun(file, args);
  const t = Array.from({ length: RUNS }, () => timeRun(file, args)).sort((a, b) => a - b);
  return percentile(t, 50);
}

try {
  execFileSync(process.execPath, [KDP, 'up', '-d', '--virtual', '--port', '0', '--data-dir', dataDir],
    { stdio: 'ignore', timeout: 120_000 });
  const anchor = median(process.execPath, ['-e', '0']);
  report('node -e 0 (anchor)', anchor, 'ms');
  const dd = ['--data-dir', dataDir];
  for (const [name, args] of [
    ['kdp status', ['status', ...dd]],
    ['kdp rules --node n1', ['rules', '--node', 'n1', ...dd]],
    ['kdp trace n1 10.96.0.1:443', ['trace', ...dd, 'n1', '10.96.0.1:443']],
    ['kdp version', ['version']],
  ] as const) {
    const ms = median(process.execPath, ['--single-threaded-gc', KDP, ...args]);
    report(`${name} wall, median of ${RUNS}`, ms, 'ms', { op: '<=', value: 300 });
    console.log(`  ${(ms / anchor).toFixed(1)}× node's own start`);
  }
} finally {
  spawnSync(process.execPath, [KDP, 'down', '--data-dir', dataDir], { stdio: 'ignore', timeout: 60_000 });
  rmSync(dataDir, { recursive: true, force: true });
}
