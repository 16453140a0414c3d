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
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
