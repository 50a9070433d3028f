import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/global.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // netns tests mutate kernel state; files run in parallel but each test creates its own netns.
    pool: 'forks',
    maxWorkers: 2,
  },
});
