// Whether the machine has a C compiler for kdp's native programs; under CI=true one is required
// (.ci/run installs gcc), so a missing compiler fails the run instead of skipping tests.

import { spawnSync } from 'node:child_process';

export function hasCompiler(): boolean {
  const ok = ['cc', 'gcc'].some((cc) => spawnSync(cc, ['--version'], { stdio: 'ignore' }).status === 0);
  if (!ok && process.env.CI === 'true') throw new Error('CI=true but no C compiler (cc/gcc) is installed');
  return ok;
}
