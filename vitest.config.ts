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
    // A worker process runs its test files one after another on one module
    // cache instead of importing web3.js, BullMQ, Fastify and the sources
    // again for each of 175 files (about a fifth of the suite's time went to
    // those imports). Each file's own top-level state is still its own; the
    // tests change no process-wide state they do not restore.
    isolate: false,
    // Most test time is waiting on sockets, slots and timers, not CPU: vitest's
    // default (cores - 1) would run one file at a time on a 2-core machine.
    maxWorkers: 3,
    // Long files first, so none starts last and runs on alone (test/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
    reporters: ['default'],
  },
});
