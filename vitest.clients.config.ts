// Real Vault clients (hvac, node-vault) against one launcher, in Node: test/clients/.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/clients/**/*.test.ts'],
    environment: 'node',
    globalSetup: ['test/clients/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
