// End-to-end tests: real processes (the launcher, wrangler dev) driven by real clients, in Node.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts'],
    environment: 'node',
    setupFiles: ['test/e2e/cleanup.ts'],
    globalSetup: ['test/e2e/global-setup.ts', 'test/e2e/oidc-provider.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Each file starts its own servers; much of a file's time is waiting for them to start.
    maxWorkers: 2,
  },
});
