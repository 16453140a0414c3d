import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/sequencer.ts';

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
    // Most test time is waiting on sockets, slots and timers, not CPU: vitest's
    // default (cores - 1) would run one file at a time on a 2-core machine.
    maxWorkers: 3,
    // Long files first, so none starts last and runs on alone (test/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
    reporters: ['default'],
  },
});
