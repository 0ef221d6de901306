// vitest's configuration, kept in test/ because the repository's top level is
// fixed: `npm test` passes --config; paths below are from the repository root.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/settings-reset.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 90_000,
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      LOG_LEVEL: 'silent',
      STAGE: 'dev',
    },
  },
});
