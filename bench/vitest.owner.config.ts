// `npm run bench:owner`: the owner's pipeline timed inside workerd (bench/owner-loop.test.ts).
import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';
import { TEST_SEAL_KEY } from '../vitest.config';

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: './wrangler.toml' },
      // Every handed-off path is handed off, as in the integration tests.
      miniflare: { bindings: { SEAL_KEY: TEST_SEAL_KEY, TOKEN_SHARDS: '3', OFFLOAD_MIN_COST_US: '0' } },
    }),
  ],
  test: { include: ['bench/owner-loop.test.ts'], testTimeout: 600_000 },
});
