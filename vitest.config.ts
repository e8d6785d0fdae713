// Unit and integration tests, run inside workerd by Cloudflare's vitest plugin.
import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';

/** A fixed test seal key; real deployments set SEAL_KEY as a Worker secret. */
export const TEST_SEAL_KEY = '8f5a2c1e9b7d4f6a3c0e2b4d6f8a1c3e5b7d9f0a2c4e6b8d0f1a3c5e7b9d2f4a';

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: './wrangler.toml' },
      miniflare: {
        // More than one shard, so tests cover tokens living on different shards.
        bindings: {
          SEAL_KEY: TEST_SEAL_KEY,
          TOKEN_SHARDS: '3',
          COFFER_TEST_ENGINES: '1',
          // Another fuzz run than the default one (test/integration/hostile/fuzz.test.ts).
          FUZZ_SEED: process.env.FUZZ_SEED ?? '',
          FUZZ_CASES: process.env.FUZZ_CASES ?? '',
          FUZZ_ONLY: process.env.FUZZ_ONLY ?? '',
          FUZZ_TRACE: process.env.FUZZ_TRACE ?? '',
        },
      },
    }),
  ],
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    // Real servers the Worker talks to (they must run in Node, outside workerd).
    globalSetup: ['test/global/audit-sink.ts', 'test/global/transit-oracle.ts', 'test/global/jwks-server.ts', 'test/global/oidc-stub.ts', 'test/emulators/msgraph.ts', 'test/emulators/google-directory.ts', 'test/emulators/okta.ts', 'test/emulators/aws-iam-sts/index.ts'],
    testTimeout: 30_000,
  },
});
