// Real Vault clients (hvac, node-vault) against one launcher, in Node: test/clients/.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/clients/**/*.test.ts'],
    environment: 'node',
    setupFiles: ['test/e2e/cleanup.ts'],
    globalSetup: ['test/clients/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
