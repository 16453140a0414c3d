import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/**/*.test.ts',
      'src/**/*.test.ts',
      'chain/**/*.test.ts',
      'delivery/**/*.test.ts',
      'spooler/**/*.test.ts',
      'pinning/**/*.test.ts',
    ],
    // Builds dist/ when it is stale, so spawned CLIs run JavaScript.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
