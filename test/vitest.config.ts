// vitest's configuration, kept in test/ because the repository's top level is
// fixed: `npm test` passes --config; paths below are from the repository root.
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Files that time the whole service as a user meets it (npm start's health check within 60 s, AI
 * findings within 90 s): run after every other file, alone, so they time the service and not their
 * neighbours (two forks on CI's 2 cores took `npm start` past its 60 s).
 */
const ALONE = ['test/e2e/npm-start.test.ts'];

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    setupFiles: ['test/support/settings-reset.ts'],
    pool: 'forks',
    // vitest's default is one fork per core less one: on CI's 2 cores, one file at a time. Most files
    // wait (DynamoDB Local, Chromium, the local servers), so two forks there take the run from about
    // 1,400 to 1,000 s; the browser tests' own timeouts (60–90 s) leave room for the shared cores.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 90_000,
    // expect.poll's own default is 1 s: a poll whose read answers at once (a row count, a URL) while the change it
    // waits for needs a round trip to the service failed under load. A passing poll still returns at once.
    expect: { poll: { timeout: 15_000 } },
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      LOG_LEVEL: 'silent',
      STAGE: 'dev',
    },
    projects: [
      // Each project runs its own global setup: only the first starts the run's DynamoDB Local.
      {
        extends: true,
        test: { name: 'service', include: ['test/**/*.test.ts'], exclude: ALONE, globalSetup: ['test/support/global-setup.ts'], sequence: { groupOrder: 0 } },
      },
      { extends: true, test: { name: 'alone', include: ALONE, globalSetup: ['test/support/console-setup.ts'], sequence: { groupOrder: 1 } } },
    ],
  },
});
