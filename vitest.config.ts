import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// Two projects share one pool of two forks. Files that only import and call kdp's code run
// without per-file isolation: re-importing the module graph for each file cost ~1 s a file,
// over 300 s of a CI run. Files that start clusters, touch the kernel or drive a browser keep a
// fresh process each, so a crash or a leaked handle stays in its file: test/netns, test/e2e and
// every other file that takes the kernel tests' gate (test/helpers/root.ts).
function kernelTestFiles(dir = 'test'): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return kernelTestFiles(p);
    return p.endsWith('.test.ts') && readFileSync(p, 'utf8').includes('helpers/root') ? [p] : [];
  });
}
const isolated = ['test/netns/**/*.test.ts', 'test/e2e/**/*.test.ts', ...kernelTestFiles()];

export default defineConfig({
  test: {
    globalSetup: ['test/setup/global.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: isolated, isolate: false },
      },
      {
        extends: true,
        // Kernel tests mutate kernel state; files run in parallel but each test creates its own netns.
        test: { name: 'isolated', include: isolated },
      },
    ],
  },
});
