import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/sequencer.js';

/**
 * Files that share state outside their own database — Redis keys and channels (budgets by IP, the
 * token invalidation bus), or PostgreSQL's database-wide transaction horizon (concurrent appends hold
 * an append in flight on purpose, and every schema's readers and writers of that database wait for it:
 * link-formulas timed out beside it in one CI run, and on 94c3aa8 too) — run one at a time, after the
 * others. Keep this list short: it runs serially.
 */
const SHARED_REDIS = [
  'test/http/rows-concurrent-appends.test.ts',
  'test/http/rate-limit-redis.test.ts',
  'test/http/tokens-revocation.test.ts',
  'test/realtime/scale-out.test.ts',
  'test/security/brute-force-redis.test.ts',
];

/** Files that must run in a fresh module graph: unit tests of modules with process-wide settings (the time zone). */
const ISOLATED = ['src/**/*.test.ts'];

/**
 * Speed (issue 35 item 5; figures in the README, Tests): the suite spends most of its time waiting
 * (HTTP, timers, child processes) and importing the app's module graph, so
 * - more workers than cores (vitest's default on a 2-core machine is one), each file still on a
 *   database of its own (a fresh in-memory SQLite or PostgreSQL schema: test/helpers/db.ts);
 * - the integration tests (test/) share a worker's module graph: the app is imported once per
 *   worker, not once per file. Each builds its app with createTestApp, which sets every process-wide
 *   setting again; tests must restore what else they change (fake timers, process.env).
 * TEST_WORKERS overrides the number of workers.
 */
const WORKERS = Number(process.env.TEST_WORKERS ?? 3);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default'],
    // dist/ built once before the files run: the real-process tests start the bundle (test/helpers/cli-process.ts).
    globalSetup: ['test/global-setup.ts'],
    sequence: { sequencer: SlowFirstSequencer },
    pool: 'forks',
    maxWorkers: WORKERS,
    projects: [
      { extends: true, test: { name: 'unit', include: ISOLATED } },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [...SHARED_REDIS, ...ISOLATED], isolate: false } },
      { extends: true, test: { name: 'shared-redis', include: SHARED_REDIS, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
