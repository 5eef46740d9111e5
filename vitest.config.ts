import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: [
      'test/setup/global-build.ts',
      'test/setup/global-redis.ts',
      'test/setup/global-postgres.ts',
    ],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/setup/summary-reporter.ts'],
  },
});
